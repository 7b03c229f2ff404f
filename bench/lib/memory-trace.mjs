// Memory of the processes under test, sampled every second through a whole run and labelled by
// the phase the run is in: resident memory split into anonymous pages (V8's heap, SQLite's page
// cache, buffers), file pages (code, and database pages read through SQLite's memory mapping)
// and shared memory, from /proc/<pid>/status; and V8's heap, from the service's own metrics
// (prom-client's default `nodejs_heap_size_*`) when a metrics address is given.
import { readFileSync } from 'node:fs';
import { clearInterval, setInterval } from 'node:timers';
import { request } from 'node:http';
import { performance } from 'node:perf_hooks';

const MIB = 2 ** 20;

/** RssAnon, RssFile and RssShmem of a process, in MiB; null once it has gone. */
export function residentParts(pid) {
  let status;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  const kib = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return {
    rss: kib('VmRSS') / 1024,
    anon: kib('RssAnon') / 1024,
    file: kib('RssFile') / 1024,
    shmem: kib('RssShmem') / 1024,
  };
}

/**
 * Starts sampling `processes` ([{ label, pid, metricsUrl? }]) every `intervalMs`. `phase(name)`
 * labels the samples taken from then on; `stop()` ends the sampling and returns every sample.
 * A sample never waits for the previous one's metrics: a slow answer is dropped (heap null).
 */
export function startMemoryTrace(processes, { intervalMs = 1_000, initialPhase = 'start' } = {}) {
  const started = performance.now();
  const samples = [];
  let phase = initialPhase;
  let stopped = false;
  const take = async () => {
    const at = (performance.now() - started) / 1000;
    const current = phase;
    const byProcess = {};
    await Promise.all(
      processes.map(async ({ label, pid, metricsUrl }) => {
        const parts = residentParts(pid);
        if (parts === null) {
          return;
        }
        const heap = metricsUrl === undefined ? null : await v8Heap(metricsUrl);
        byProcess[label] = {
          ...roundAll(parts),
          heapUsed: heap?.used ?? null,
          heapTotal: heap?.total ?? null,
        };
      }),
    );
    samples.push({ seconds: Math.round(at * 10) / 10, phase: current, ...byProcess });
  };
  void take();
  const timer = setInterval(() => void take(), intervalMs);
  timer.unref();
  return {
    phase(name) {
      phase = name;
      void take();
    },
    async stop() {
      if (!stopped) {
        stopped = true;
        clearInterval(timer);
        await take();
      }
      return samples.slice().sort((a, b) => a.seconds - b.seconds);
    },
  };
}

/** V8's heap (used, total) in MiB from a prom-client /metrics page, or null. */
function v8Heap(url) {
  return new Promise((resolve) => {
    const req = request(url, { agent: false, timeout: 500 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => {
        const value = (name) => Number(new RegExp(`^${name}\\s+([0-9.e+]+)`, 'm').exec(body)?.[1]);
        const used = value('nodejs_heap_size_used_bytes');
        const total = value('nodejs_heap_size_total_bytes');
        resolve(
          Number.isFinite(used) && Number.isFinite(total)
            ? { used: round1(used / MIB), total: round1(total / MIB) }
            : null,
        );
      });
      res.on('error', () => resolve(null));
    });
    req.on('error', () => resolve(null));
    req.on('timeout', () => {
      req.destroy();
      resolve(null);
    });
    req.end();
  });
}

const FIELDS = ['rss', 'anon', 'file', 'shmem', 'heapUsed'];

/**
 * Per phase (in the order they were entered) and per field: min, first (start), last (end) and
 * max of one process's samples.
 */
export function summarizeByPhase(samples, label) {
  const phases = [];
  for (const sample of samples) {
    const values = sample[label];
    if (values === undefined) {
      continue;
    }
    let entry = phases.find((p) => p.phase === sample.phase);
    if (entry === undefined) {
      entry = { phase: sample.phase, samples: 0, from: sample.seconds, to: sample.seconds };
      phases.push(entry);
    }
    entry.samples += 1;
    entry.to = sample.seconds;
    for (const field of FIELDS) {
      const value = values[field];
      if (value === null || value === undefined || Number.isNaN(value)) {
        continue;
      }
      const stats = (entry[field] ??= { min: value, start: value, end: value, max: value });
      stats.min = Math.min(stats.min, value);
      stats.max = Math.max(stats.max, value);
      stats.end = value;
    }
  }
  return phases;
}

/**
 * The "memory flat" verdict for one process. Anonymous memory: its level at the end of the run
 * minus its level once warmed up (the end of the phase `warmPhase`), against `anonBudgetMiB`.
 * File pages: their peak minus their level at the end of warm-up, against `fileBoundMiB` (what
 * the memory mapping may add, plus code loaded late).
 */
export function memoryVerdict(samples, label, { warmPhase, anonBudgetMiB, fileBoundMiB }) {
  const phases = summarizeByPhase(samples, label);
  const warm = phases.find((p) => p.phase === warmPhase);
  const last = phases.at(-1);
  if (warm === undefined || last === undefined) {
    return null;
  }
  const after = phases.slice(phases.indexOf(warm) + 1);
  const maxOf = (field) =>
    Math.max(warm[field].end, ...after.map((p) => p[field]?.max ?? -Infinity));
  const anonGrowth = last.anon.end - warm.anon.end;
  const anonPeakGrowth = maxOf('anon') - warm.anon.end;
  const fileGrowth = maxOf('file') - warm.file.end;
  return {
    anonAfterWarmUp: warm.anon.end,
    anonAtEnd: last.anon.end,
    anonGrowth: round1(anonGrowth),
    anonPeakGrowth: round1(anonPeakGrowth),
    anonBudgetMiB,
    fileAfterWarmUp: warm.file.end,
    fileMax: maxOf('file'),
    fileGrowth: round1(fileGrowth),
    fileBoundMiB,
    flat: anonGrowth < anonBudgetMiB && fileGrowth <= fileBoundMiB,
  };
}

function round1(value) {
  return Math.round(value * 10) / 10;
}

function roundAll(object) {
  return Object.fromEntries(Object.entries(object).map(([key, value]) => [key, round1(value)]));
}
