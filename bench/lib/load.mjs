// Driving load with autocannon and measuring a system under test (SUT) from outside.
//
// A SUT is { label, targets: [{ url, pid }], pids, usesPostgres }. With two targets (the --pg
// mode's two instances) one autocannon runs per target, each with its share of the connections
// and of any rate, and their figures are added. Latency percentiles are computed from every raw
// response time (autocannon's 'response' event), never by averaging two instances' percentiles,
// and without autocannon's coordinated-omission correction, which under overallRate would invent
// extra samples for every response slower than 1 ms.
import autocannon from 'autocannon';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { clearTimeout, setTimeout } from 'node:timers';
import { setTimeout as delay } from 'node:timers/promises';
import process from 'node:process';
import {
  cpuByPid,
  cpuDelta,
  machineBusySeconds,
  memoryMiB,
  postgresPids,
  resetPeakRss,
} from './proc.mjs';
import { percentile } from './stats.mjs';

/** Per-request timeout; a PBKDF2 queue of 32 connections on 2 cores answers in a few seconds. */
const REQUEST_TIMEOUT_S = 30;

/**
 * Runs the given loads together for warmupMs + windowMs and measures only the window: requests
 * completed in it, their latencies, and the SUT's CPU time and peak RSS over it. Skipping the
 * first moments keeps ramp-up out of the figures; a window edge cuts through in-flight requests
 * at both ends alike, so CPU per request stays fair even for the slow PBKDF2 endpoints.
 *
 * loads: [{ name, connections, overallRate?, requests(target) → autocannon requests array }]
 */
export async function measureWindow(sut, { loads, warmupMs, windowMs }) {
  const safetySeconds = Math.ceil((warmupMs + windowMs) / 1000) + 10;
  const running = loads.map((load) => startLoad(sut.targets, load, { duration: safetySeconds }));
  try {
    await delay(warmupMs);
    const start = snapshot(sut, { resetPeak: true });
    running.forEach((run) => (run.recorder.recording = true));
    await delay(windowMs);
    running.forEach((run) => (run.recorder.recording = false));
    const end = snapshot(sut, { resetPeak: false });
    const seconds = (end.time - start.time) / 1000;
    return {
      ...usage(start, end),
      loads: Object.fromEntries(
        running.map((run, i) => [loads[i].name, summarize(run.recorder, seconds)]),
      ),
    };
  } finally {
    await Promise.all(running.map((run) => run.stop()));
  }
}

/**
 * One measured window of a single endpoint on `sut`: `connections` clients sending
 * `endpoint.requests(sut.state)` for warmupMs + endpoint.windowMs. Returns the window and the
 * endpoint's load in it.
 *
 * endpoint: { name, windowMs, requests(state) → autocannon requests array }
 */
export async function measureEndpointWindow(sut, endpoint, { connections, warmupMs }) {
  const window = await measureWindow(sut, {
    loads: [{ name: endpoint.name, connections, requests: () => endpoint.requests(sut.state) }],
    warmupMs,
    windowMs: endpoint.windowMs,
  });
  return { window, load: window.loads[endpoint.name] };
}

/**
 * Sends `amount` requests in all (or stops at maxMs, whichever comes first) and reports what
 * was done. Used by the stability check, where the count matters more than the rate.
 */
export async function runAmount(sut, { load, amount, maxMs }) {
  const start = snapshot(sut, { resetPeak: false });
  const run = startLoad(sut.targets, load, { amount, duration: Math.ceil(maxMs / 1000) + 10 });
  run.recorder.recording = true;
  // The cap's timer is cleared when the load ends first, so it cannot keep the process alive.
  let timer;
  const capped = new Promise((resolve) => (timer = setTimeout(resolve, maxMs, 'capped')));
  const reason = await Promise.race([run.finished.then(() => 'done'), capped]);
  clearTimeout(timer);
  await run.stop();
  const end = snapshot(sut, { resetPeak: false });
  return {
    ...summarize(run.recorder, (end.time - start.time) / 1000),
    ...usage(start, end),
    hitTimeCap: reason === 'capped',
  };
}

/** Runs a load for `ms` and throws its figures away: JIT and caches warm up on both sides. */
export async function warmUp(sut, load, ms) {
  const run = startLoad(sut.targets, load, { duration: Math.ceil(ms / 1000) + 10 });
  await delay(ms);
  await run.stop();
}

/**
 * Waits until the SUT has been idle (under 5% of one core) for 200 ms. A stopped load generator
 * closes its connections, but requests already accepted keep running: for login that is up to
 * a queue of PBKDF2 hashes, which must not spill into the next measurement.
 */
export async function waitUntilIdle(sut, timeoutMs = 15_000) {
  const deadline = performance.now() + timeoutMs;
  let before = totalCpu(sut);
  while (performance.now() < deadline) {
    await delay(200);
    const now = totalCpu(sut);
    if (now - before < 0.01) {
      return;
    }
    before = now;
  }
}

function totalCpu(sut) {
  const pids = sut.usesPostgres ? [...sut.pids, ...postgresPids()] : sut.pids;
  return [...cpuByPid(pids).values()].reduce((sum, seconds) => sum + seconds, 0);
}

function startLoad(targets, load, { duration, amount }) {
  const recorder = { recording: false, count: 0, non2xx: 0, errors: 0, latencies: [] };
  const instances = targets.map((target, i) => {
    const instance = autocannon(
      {
        url: target.url,
        connections: share(load.connections, targets.length, i),
        pipelining: 1,
        duration,
        amount: amount === undefined ? undefined : share(amount, targets.length, i),
        overallRate: load.overallRate && share(load.overallRate, targets.length, i),
        requests: load.requests(target),
        timeout: REQUEST_TIMEOUT_S,
        // autocannon acts on stop() at its next sample tick; a short tick stops it promptly.
        sampleInt: 100,
      },
      () => {},
    );
    instance.on('response', (_client, status, _bytes, ms) => record(recorder, status, ms));
    instance.on('reqError', () => recorder.recording && recorder.errors++);
    return instance;
  });
  const finished = Promise.all(instances.map((instance) => once(instance, 'done')));
  const stop = () => {
    instances.forEach((instance) => instance.stop());
    return finished;
  };
  return { recorder, finished, stop };
}

function record(recorder, status, ms) {
  if (!recorder.recording) {
    return;
  }
  recorder.count++;
  recorder.latencies.push(ms);
  if (status < 200 || status >= 300) {
    recorder.non2xx++;
  }
}

/** An even split of `total` over `parts`, at least 1 each. */
function share(total, parts, index) {
  return Math.max(1, Math.floor(total / parts) + (index < total % parts ? 1 : 0));
}

function summarize(recorder, seconds) {
  return {
    requests: recorder.count,
    seconds,
    rps: recorder.count / seconds,
    p50: percentile(recorder.latencies, 50),
    p99: percentile(recorder.latencies, 99),
    max: recorder.latencies.length
      ? recorder.latencies.reduce((a, b) => Math.max(a, b))
      : Number.NaN,
    non2xx: recorder.non2xx,
    errors: recorder.errors,
  };
}

function snapshot(sut, { resetPeak }) {
  const gone = sut.targets.find((target) => target.hasExited);
  if (gone) {
    throw new Error(
      `${gone.name} (pid ${gone.pid}) exited during the run (${JSON.stringify(gone.exitInfo)}):\n${gone.logTail()}`,
    );
  }
  const peakReset = resetPeak && sut.pids.every((pid) => resetPeakRss(pid));
  return {
    peakReset,
    time: performance.now(),
    cpu: cpuByPid(sut.pids),
    harnessCpu: process.cpuUsage(),
    machineBusy: machineBusySeconds(),
    dbCpu: sut.usesPostgres ? cpuByPid(postgresPids()) : null,
    peakRss: Math.max(...sut.pids.map((pid) => memoryMiB(pid).peak)),
  };
}

/**
 * CPU seconds over the window: the SUT's node processes, the database server (PostgreSQL only),
 * the harness itself (the load generator), and everything else on the machine.
 */
function usage(start, end) {
  const cpuSeconds = cpuDelta(start.cpu, end.cpu);
  const dbCpuSeconds = start.dbCpu ? cpuDelta(start.dbCpu, end.dbCpu) : null;
  const harnessCpuSeconds =
    (end.harnessCpu.user -
      start.harnessCpu.user +
      end.harnessCpu.system -
      start.harnessCpu.system) /
    1e6;
  const machineSeconds = end.machineBusy - start.machineBusy;
  return {
    cpuSeconds,
    dbCpuSeconds,
    harnessCpuSeconds,
    otherCpuSeconds: Math.max(
      0,
      machineSeconds - cpuSeconds - (dbCpuSeconds ?? 0) - harnessCpuSeconds,
    ),
    peakRssMiB: end.peakRss,
    // False where the kernel refused the reset: the peak is then the peak since start.
    peakRssIsPerWindow: start.peakReset,
  };
}
