// `npm run bench -- --webhooks [--pg] [--quick]`: what a webhook subscription costs the requests
// that cause events. Two copies of the built service, each on its own fresh database, in the same
// run: `none` without subscriptions, `subscribed` with one subscription to every event type (made
// through the admin CLI, as an operator would), pointed at a receiver in this process that
// answers 204 at once. Each round measures refresh and login throughput on both, the first of
// the pair swapping each round, with the harness waiting until both are idle between runs; the
// ratio subscribed/none is taken per round and its nearest-rank median reported (goal ≥ 0.9;
// with four rounds, the lower of the middle two). The rounds are even in number, so each service
// goes first equally often: with three, one went second twice, and on this VM the second window
// of a pair tended to read higher (decision 0050). Deliveries
// counted at the receiver show the subscription was live. Deliveries yield to requests
// (Webhooks__YieldToRequests, on by default), so after each subscribed window the harness also
// measures the lag that left: the deliveries still to come when the window closed, and how long
// after it the last of them arrived. Writes bench/results/latest-webhooks{,-pg}.md and .json.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { setTimeout as delay } from 'node:timers/promises';
import { URL, fileURLToPath } from 'node:url';
import { postgresDatabase, sqliteDatabase } from './lib/databases.mjs';
import { measureEndpointWindow, waitUntilIdle, warmUp } from './lib/load.mjs';
import {
  SERVICE_ENTRY,
  freePort,
  serviceEnv,
  spawnNode,
  stopAll,
  waitForFirstAnswer,
} from './lib/processes.mjs';
import {
  createState,
  ensureRefreshTokens,
  loginRequest,
  refreshRequest,
  seed,
} from './lib/scenarios.mjs';
import { median, round } from './lib/stats.mjs';

const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));
const CLI_ENTRY = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const GOAL = 0.9;
/** The receiver has drained the queue once nothing arrived for this long. */
const QUIET_MS = 1_000;
/** The longest wait for a drain: a bound, so the benchmark always stops by itself. */
const LONGEST_DRAIN_MS = 120_000;

const FULL = { rounds: 4, connections: 20, warmupMs: 1_000, refreshMs: 3_000, loginMs: 4_000 };
const QUICK = { rounds: 1, connections: 10, warmupMs: 500, refreshMs: 1_000, loginMs: 1_000 };

export async function runWebhooks({ pg: onPostgres = false, quick = false }) {
  const plan = quick ? QUICK : FULL;
  const tmp = await mkdtemp(join(tmpdir(), 'keygate-bench-webhooks-'));
  const databases = [];
  let delivered = 0;
  let lastDeliveryAt = 0;
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      delivered += 1;
      lastDeliveryAt = performance.now();
      response.writeHead(204).end();
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  const receiverUrl = `http://127.0.0.1:${receiver.address().port}/hooks`;
  const webhookEnv = {
    Webhooks__EncryptionKeys: randomBytes(32).toString('base64'),
    Webhooks__AllowPrivateDestinations: 'true',
  };
  const loadBefore = loadavg();
  try {
    const suts = [];
    for (const label of ['none', 'subscribed']) {
      const database = onPostgres
        ? await postgresDatabase(`webhooks_${label}`)
        : sqliteDatabase(tmp, label);
      databases.push(database);
      const port = await freePort();
      const env = {
        ...serviceEnv({
          port,
          secret: randomBytes(36).toString('base64url'),
          connectionString: database.connectionString,
        }),
        ...webhookEnv,
      };
      const handle = spawnNode({
        name: label,
        args: [SERVICE_ENTRY],
        env,
        cwd: tmp,
        port,
        logFile: join(tmp, `${label}.log`),
      });
      await waitForFirstAnswer(handle);
      if (label === 'subscribed') {
        const added = spawnSync(
          process.execPath,
          [CLI_ENTRY, 'webhooks:add', '--url', receiverUrl, '--events', 'all'],
          { cwd: tmp, env, encoding: 'utf8' },
        );
        if (added.status !== 0) {
          throw new Error(`webhooks:add failed: ${added.stderr}`);
        }
      }
      const sut = {
        label,
        targets: [handle],
        pids: [handle.pid],
        usesPostgres: onPostgres,
        state: createState(label),
        url: handle.url,
      };
      await seed(sut.state, sut.url, 32);
      await ensureRefreshTokens(sut.state, sut.url, 2 * plan.connections);
      await warmUp(
        sut,
        { connections: plan.connections, requests: () => [refreshRequest(sut.state)] },
        1_000,
      );
      suts.push(sut);
    }

    /** Waits until the receiver hears nothing more: what was still queued, and how long it took. */
    const drain = async () => {
      const closedAt = performance.now();
      const atClose = delivered;
      while (performance.now() - closedAt < LONGEST_DRAIN_MS) {
        await delay(50);
        if (performance.now() - Math.max(lastDeliveryAt, closedAt) >= QUIET_MS) {
          break;
        }
      }
      return {
        queuedAtClose: delivered - atClose,
        drainMs: Math.max(0, lastDeliveryAt - closedAt),
      };
    };

    const endpoints = [
      { name: 'refresh', windowMs: plan.refreshMs, requests: (state) => [refreshRequest(state)] },
      { name: 'login', windowMs: plan.loginMs, requests: (state) => [loginRequest(state)] },
    ];
    const rounds = [];
    for (let r = 0; r < plan.rounds; r++) {
      const order = r % 2 === 0 ? suts : [...suts].reverse();
      const runs = {};
      for (const endpoint of endpoints) {
        for (const sut of order) {
          if (endpoint.name === 'refresh') {
            await ensureRefreshTokens(sut.state, sut.url, 2 * plan.connections);
          }
          await Promise.all(suts.map((s) => waitUntilIdle(s)));
          const { window, load } = await measureEndpointWindow(sut, endpoint, plan);
          runs[`${endpoint.name}:${sut.label}`] = {
            rps: load.rps,
            p99: load.p99,
            non2xx: load.non2xx,
            cpuMsPerRequest: (window.cpuSeconds * 1000) / load.requests,
            ...(sut.label === 'subscribed' ? await drain() : {}),
          };
          process.stdout.write(
            `round ${r + 1} ${endpoint.name} ${sut.label}: ${round(load.rps, 1)} req/s, ` +
              `p99 ${round(load.p99, 1)} ms, ${round((window.cpuSeconds * 1000) / load.requests, 3)} ms CPU/req\n`,
          );
        }
      }
      rounds.push(runs);
    }
    const ratio = (name) =>
      median(rounds.map((runs) => runs[`${name}:subscribed`].rps / runs[`${name}:none`].rps));
    const results = {
      mode: onPostgres ? 'pg' : 'sqlite',
      quick,
      goal: GOAL,
      node: process.version,
      ratios: { refresh: ratio('refresh'), login: ratio('login') },
      deliveredWebhooks: delivered,
      loadAverageBefore: loadBefore,
      loadAverageAfter: loadavg(),
      rounds,
    };
    const suffix = onPostgres ? '-pg' : '';
    writeFileSync(
      join(RESULTS_DIR, `latest-webhooks${suffix}.json`),
      `${JSON.stringify(results, null, 2)}\n`,
    );
    writeFileSync(join(RESULTS_DIR, `latest-webhooks${suffix}.md`), report(results));
    process.stdout.write(report(results));
    return results.ratios.refresh >= GOAL && results.ratios.login >= GOAL ? 0 : 1;
  } finally {
    await stopAll();
    receiver.close();
    for (const database of databases) {
      await database.drop?.();
    }
    await rm(tmp, { recursive: true, force: true });
  }
}

function report(results) {
  const verdict = (value) =>
    `${round(value, 3)} ${value >= GOAL ? 'pass' : 'FAIL'} (goal ≥ ${GOAL})`;
  const lines = [
    `# Webhooks: throughput with one subscription to every event (${results.mode}${results.quick ? ', quick' : ''})`,
    '',
    '| Endpoint | subscribed / none (median of rounds) |',
    '| -------- | ------------------------------------ |',
    `| refresh  | ${verdict(results.ratios.refresh)} |`,
    `| login    | ${verdict(results.ratios.login)} |`,
    '',
    `Node ${results.node}. Webhooks delivered to the receiver during the run: ${results.deliveredWebhooks}.`,
    `Load average before: ${results.loadAverageBefore.map((v) => round(v, 2)).join(', ')}; after: ${results.loadAverageAfter.map((v) => round(v, 2)).join(', ')}.`,
    '',
    'Deliveries yield to requests: "queued at close" is how many deliveries of a subscribed window',
    'were still to come when it closed, and "drained in" how long after it the last one arrived.',
    '',
    '| Round | Endpoint | none req/s | subscribed req/s | none ms CPU/req | subscribed ms CPU/req | queued at close | drained in (ms) |',
    '| ----- | -------- | ---------- | ---------------- | --------------- | --------------------- | --------------- | --------------- |',
  ];
  results.rounds.forEach((runs, i) => {
    for (const name of ['refresh', 'login']) {
      const none = runs[`${name}:none`];
      const sub = runs[`${name}:subscribed`];
      lines.push(
        `| ${i + 1} | ${name} | ${round(none.rps, 1)} | ${round(sub.rps, 1)} | ${round(none.cpuMsPerRequest, 3)} | ${round(sub.cpuMsPerRequest, 3)} | ${sub.queuedAtClose} | ${round(sub.drainMs, 0)} |`,
      );
    }
  });
  return `${lines.join('\n')}\n`;
}
