// `npm run bench` (= nest build && node bench/run.mjs): the built service against a minimal
// baseline doing the same work (bench/baseline.mjs), on this machine, over loopback only,
// bounded in time (about three minutes). `npm run bench -- --pg` puts the service on the local
// PostgreSQL, as two instances sharing the load, against a Fastify + `pg` baseline doing the same
// work with the same atomic guarantees, also two instances on a database of its own on the same
// server (bench/baseline-pg.mjs); it also counts round trips to PostgreSQL per request.
// Results: bench/results/latest{,-pg}.md, .json and ratios{,-pg}.svg. See bench/README.md.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, release, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { clearInterval, clearTimeout, setInterval, setTimeout } from 'node:timers';
import { setTimeout as delay } from 'node:timers/promises';
import { URL, fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { PBKDF2_ITERATIONS, measurePbkdf2Ceiling } from './lib/ceiling.mjs';
import { POSTGRES_SERVER_URL, postgresDatabase, sqliteDatabase } from './lib/databases.mjs';
import {
  measureEndpointWindow,
  measureWindow,
  runAmount,
  waitUntilIdle,
  warmUp,
} from './lib/load.mjs';
import { cpuSeconds, machineBusySeconds, memoryMiB, openFds, resetPeakRss } from './lib/proc.mjs';
import {
  BASELINE_ENTRY,
  PG_BASELINE_ENTRY,
  SERVICE_ENTRY,
  freePort,
  serviceEnv,
  spawnNode,
  stopAll,
  waitForFirstAnswer,
} from './lib/processes.mjs';
import { writeResults } from './lib/report.mjs';
import { roundTripsPerRequest, startRoundTripCounter } from './lib/round-trips.mjs';
import { assemble } from './lib/results.mjs';
import {
  createState,
  ensureRefreshTokens,
  loginRequest,
  meRequests,
  mixedRequests,
  refreshRequest,
  registerRequest,
  seed,
} from './lib/scenarios.mjs';
import { median, round } from './lib/stats.mjs';

const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));

const { values: flags } = parseArgs({
  options: {
    pg: { type: 'boolean', default: false },
    // With --pg: only count round trips per request (a few seconds), no throughput runs.
    'round-trips': { type: 'boolean', default: false },
    // A short smoke run of every phase, for working on the harness itself; not for figures.
    quick: { type: 'boolean', default: false },
    // The service on a database of a million users against an empty one: bench/scale.mjs.
    scale: { type: 'boolean', default: false },
    // What one refresh leaves behind in the database, per table and index: bench/row-bytes.mjs.
    'row-bytes': { type: 'boolean', default: false },
    // /me and refresh with access tokens signed HS256, ES256 and EdDSA, side by side (issue 25).
    signing: { type: 'boolean', default: false },
    // /me on one SQLite process, two PostgreSQL instances reading strictly and two with
    // Database__AccountCache=on, side by side in alternating windows (issue 41).
    'account-cache': { type: 'boolean', default: false },
    // SQLite's commit durability for the service (Database__SqliteSynchronous): `full`, the
    // service's default, or `normal`, to measure what an fsync per commit costs.
    'sqlite-synchronous': { type: 'string', default: 'full' },
    // Refresh and login throughput with one webhook subscription to every event beside none.
    webhooks: { type: 'boolean', default: false },
  },
});
if (!['full', 'normal'].includes(flags['sqlite-synchronous'])) {
  throw new Error('--sqlite-synchronous must be full or normal');
}

if (flags['row-bytes']) {
  const { runRowBytes } = await import('./row-bytes.mjs');
  process.exit(await runRowBytes({ pg: flags.pg, quick: flags.quick }));
}

if (flags.webhooks) {
  const { runWebhooks } = await import('./webhooks.mjs');
  process.exit(await runWebhooks({ pg: flags.pg, quick: flags.quick }));
}

if (flags.scale) {
  const { runScale } = await import('./scale.mjs');
  process.exit(await runScale({ pg: flags.pg, quick: flags.quick }));
}

/** Durations and sizes: about three and a half minutes in all on 2 cores. */
const FULL_PLAN = {
  rounds: 3,
  connections: 20,
  warmupMs: 1_000, // skipped at the start of every measured run (ramp-up)
  fastWindowMs: 2_000, // /me and refresh: thousands of requests per window
  hashWindowMs: 3_000, // login and register: PBKDF2-bound, about ten requests per second
  seedUsers: 32, // at least one account per flood connection: logins to one account queue
  ceilingMs: 3_000, // per round, next to the login and register runs it is compared with
  startups: 5,
  floodWindowMs: 8_000,
  floodConnections: 32,
  floodMeConnections: 10,
  meRate: 100,
  stabilityRequests: 100_000,
  stabilityMaxMs: 90_000, // a cap, not a target: about 40 s on SQLite and 60 s on PostgreSQL here
};
const QUICK_PLAN = {
  ...FULL_PLAN,
  rounds: 1,
  fastWindowMs: 1_000,
  hashWindowMs: 1_500,
  seedUsers: 8,
  ceilingMs: 1_000,
  startups: 2,
  floodWindowMs: 2_000,
  stabilityRequests: 5_000,
  stabilityMaxMs: 10_000,
};
const plan = flags.quick ? QUICK_PLAN : FULL_PLAN;
const mode = flags.pg ? 'pg' : 'sqlite';

/** Above this much CPU taken by other processes during measurements, the run says so. */
const NOISY_MACHINE_CORES = 0.25;

/** The label of the service started with Jwt__RequireActiveSession=true. */
const SESSION_CHECK_LABEL = 'session-check';

/** The measured endpoints, in the order each round runs them. */
const ENDPOINTS = [
  { name: 'login', windowMs: plan.hashWindowMs, requests: (state) => [loginRequest(state)] },
  { name: 'register', windowMs: plan.hashWindowMs, requests: (state) => [registerRequest(state)] },
  { name: 'me', windowMs: plan.fastWindowMs, requests: (state) => meRequests(state) },
  { name: 'refresh', windowMs: plan.fastWindowMs, requests: (state) => [refreshRequest(state)] },
];

/** The run's temporary folder (servers' logs). */
let tmpDir;

/** Undo steps (drop databases, delete files), run in reverse order on the way out. */
const cleanups = [];
const log = (message) =>
  process.stdout.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

async function main() {
  const started = performance.now();
  const tmp = await mkdtemp(join(tmpdir(), 'keygate-bench-'));
  tmpDir = tmp;
  // The servers' logs are in tmp: it is kept when the run fails, so the cause can be read.
  cleanups.push((failed) =>
    failed
      ? Promise.resolve(log(`servers' logs kept in ${tmp}`))
      : rm(tmp, { recursive: true, force: true }),
  );
  // One secret of 48 characters, shared by every process so tokens verify on either instance.
  const secret = randomBytes(36).toString('base64url');
  log(
    `mode ${mode}${flags.quick ? ' (quick smoke run: figures are not meaningful)' : ''}; temp ${tmp}`,
  );

  if (flags.signing) {
    await measureSigning(tmp, secret);
    return;
  }
  if (flags['account-cache']) {
    await measureAccountCache(tmp, secret);
    return;
  }

  const roundTrips = mode === 'pg' ? await measureRoundTrips(tmp, secret) : null;
  if (flags['round-trips']) {
    return;
  }

  const startup = await measureStartup(tmp, secret);
  log(
    `start-up median ${round(startup.medianMs, 0)} ms (${startup.samplesMs.map((ms) => round(ms, 0)).join(', ')})`,
  );

  const service = await startService(tmp, secret);
  const baseline = await startBaseline(tmp, secret);
  // The service again, with Jwt__RequireActiveSession=true: what the session check costs.
  const checked = await startService(tmp, secret, {
    label: SESSION_CHECK_LABEL,
    env: { Jwt__RequireActiveSession: 'true' },
  });
  const suts = [service, baseline];
  // Seeding and warming up are not measured, so the servers do it at once.
  await Promise.all([...suts, checked].map((sut) => prepare(sut)));

  const rounds = await runRounds(suts);
  const sessionCheck = await measureSessionCheck(service, checked, [...suts, checked]);
  await checked.stop();
  const flood = {};
  for (const sut of suts) {
    flood[sut.label] = await measureFlood(sut, suts);
  }
  const stability = await measureStability(service, suts);

  const results = {
    ...assemble({ mode, rounds, flood, stability, startup, sessionCheck }),
    roundTrips,
    command: commandLine(),
    quick: flags.quick,
    machine: await describeMachine(),
    plan: { ...plan, pbkdf2Iterations: PBKDF2_ITERATIONS },
    processes: { service: service.pids, baseline: baseline.pids },
    notes: notes(),
    elapsedSeconds: round((performance.now() - started) / 1000, 1),
  };
  const files = await writeResults(results, RESULTS_DIR);
  for (const target of results.targets) {
    log(
      `${target.result.padEnd(4)} ${target.name}: ${target.measured} (target ${target.threshold})`,
    );
  }
  if (results.otherActivity.medianCores > NOISY_MACHINE_CORES) {
    log(
      `warning: other processes used a median of ${round(results.otherActivity.medianCores, 2)} cores ` +
        'during the measured windows; absolute figures are low and noisy, rerun on a quiet machine',
    );
  }
  log(`done in ${results.elapsedSeconds} s: ${Object.values(files).join(', ')}`);
}

/** The algorithms `--signing` compares, the interface's HS256 first: each is a service of its own. */
const SIGNING_ALGORITHMS = ['HS256', 'ES256', 'EdDSA'];

/**
 * `--signing` compares services with each other, not with a baseline, in two-second windows: on
 * a shared host a round's ratio swings by a fifth, so it takes the median of more rounds.
 */
const SIGNING_ROUNDS = flags.quick ? 1 : 7;

/**
 * `--signing`: `/me` and refresh on three copies of the service, one per signing algorithm, each
 * on its own database, in rounds whose order rotates; the ratio of each algorithm's requests/s
 * to HS256's is taken per round and its median reported (goal of issue 25: at least 0.9).
 */
async function measureSigning(tmp, secret) {
  const keys = { Keys__EncryptionKeys: randomBytes(32).toString('base64') };
  const suts = [];
  for (const algorithm of SIGNING_ALGORITHMS) {
    const env = algorithm === 'HS256' ? {} : { Jwt__SigningAlgorithm: algorithm, ...keys };
    suts.push(await startService(tmp, secret, { label: algorithm, env }));
  }
  for (const sut of suts) {
    await prepare(sut);
  }
  const endpoints = ENDPOINTS.filter((endpoint) => ['me', 'refresh'].includes(endpoint.name));
  const rounds = [];
  for (let number = 1; number <= SIGNING_ROUNDS; number++) {
    const shift = (number - 1) % suts.length;
    const order = [...suts.slice(shift), ...suts.slice(0, shift)];
    const runs = {};
    for (const endpoint of endpoints) {
      runs[endpoint.name] = {};
      for (const sut of order) {
        const run = await measureEndpoint(sut, suts, endpoint);
        runs[endpoint.name][sut.label] = run;
        log(
          `round ${number} ${endpoint.name.padEnd(8)} ${sut.label.padEnd(6)} ${describeRun(run)}`,
        );
      }
    }
    rounds.push({ round: number, runs });
  }
  const ratios = {};
  for (const endpoint of endpoints) {
    ratios[endpoint.name] = {};
    for (const algorithm of SIGNING_ALGORITHMS.slice(1)) {
      const perRound = rounds.map(
        ({ runs }) => runs[endpoint.name][algorithm].rps / runs[endpoint.name].HS256.rps,
      );
      ratios[endpoint.name][algorithm] = { median: median(perRound), perRound };
      log(
        `${endpoint.name} ${algorithm}/HS256 median ${round(median(perRound), 3)} ` +
          `(${perRound.map((ratio) => round(ratio, 3)).join(', ')}; goal ≥ 0.9)`,
      );
    }
  }
  const results = {
    mode,
    command: commandLine(),
    quick: flags.quick,
    machine: await describeMachine(),
    plan,
    ratios,
    rounds,
  };
  const name = `latest-signing${mode === 'pg' ? '-pg' : ''}`;
  await writeFile(join(RESULTS_DIR, `${name}.json`), `${JSON.stringify(results, null, 2)}\n`);
  const lines = [
    `# Signing algorithms (${mode}): \`${results.command}\``,
    '',
    'Requests per second of each algorithm over HS256 on the same machine, median of the rounds',
    '(goal of issue 25: at least 0.9).',
    '',
    '| Endpoint | ES256 / HS256 | EdDSA / HS256 |',
    '| -------- | ------------- | ------------- |',
    ...endpoints.map(
      ({ name: endpoint }) =>
        `| ${endpoint} | ${round(ratios[endpoint].ES256.median, 3)} | ${round(ratios[endpoint].EdDSA.median, 3)} |`,
    ),
    '',
    '| Round | Endpoint | Algorithm | req/s | p50 ms | p99 ms | CPU ms/req | other cores |',
    '| ----- | -------- | --------- | ----- | ------ | ------ | ---------- | ----------- |',
    ...rounds.flatMap(({ round: number, runs }) =>
      Object.entries(runs).flatMap(([endpoint, byAlgorithm]) =>
        Object.entries(byAlgorithm).map(
          ([algorithm, run]) => `| ${number} | ${endpoint} | ${algorithm} | ${runCells(run)} |`,
        ),
      ),
    ),
    '',
    `Machine: ${JSON.stringify(results.machine)}`,
    '',
  ];
  await writeFile(join(RESULTS_DIR, `${name}.md`), lines.join('\n'));
  log(`done: ${join(RESULTS_DIR, `${name}.md`)}`);
}

/** A measured run's cells of a results table: req/s, p50, p99, CPU per request, other cores. */
function runCells(run) {
  return [
    round(run.rps, 1),
    round(run.p50, 1),
    round(run.p99, 1),
    round(run.cpuMsPerRequest, 3),
    round(run.otherCores, 2),
  ].join(' | ');
}

/** `--account-cache`: the three services it compares, SQLite's first (the figure to reach). */
const ACCOUNT_CACHE_SUTS = [
  { label: 'sqlite', engine: 'sqlite', env: {} },
  { label: 'pg-strict', engine: 'pg', env: {} },
  { label: 'pg-cache', engine: 'pg', env: { Database__AccountCache: 'on' } },
];

/** Rounds of `--account-cache`; each measures every service once, in a rotating order. */
const ACCOUNT_CACHE_ROUNDS = flags.quick ? 1 : 7;

/**
 * `--account-cache`: `GET /me` on one SQLite process, on two PostgreSQL instances reading every
 * account, and on two with the account cache on, each on its own database, in rounds whose
 * order rotates; the ratio of each PostgreSQL pair's requests/s to SQLite's is taken per round
 * and its median reported (goal of issue 41: the cached pair at least 1.0).
 */
async function measureAccountCache(tmp, secret) {
  const suts = [];
  for (const { label, engine, env } of ACCOUNT_CACHE_SUTS) {
    suts.push(await startService(tmp, secret, { label, env, engine }));
  }
  for (const sut of suts) {
    await prepare(sut);
  }
  const me = ENDPOINTS.find((endpoint) => endpoint.name === 'me');
  const rounds = [];
  for (let number = 1; number <= ACCOUNT_CACHE_ROUNDS; number++) {
    const shift = (number - 1) % suts.length;
    const order = [...suts.slice(shift), ...suts.slice(0, shift)];
    const runs = {};
    for (const sut of order) {
      const run = await measureEndpoint(sut, suts, me);
      runs[sut.label] = run;
      log(`round ${number} me ${sut.label.padEnd(9)} ${describeRun(run)}`);
    }
    rounds.push({ round: number, runs });
  }
  const ratios = {};
  for (const label of ['pg-strict', 'pg-cache']) {
    const perRound = rounds.map(({ runs }) => runs[label].rps / runs.sqlite.rps);
    ratios[label] = { median: median(perRound), perRound };
    log(
      `me ${label}/sqlite median ${round(median(perRound), 3)} ` +
        `(${perRound.map((ratio) => round(ratio, 3)).join(', ')}; goal for pg-cache ≥ 1.0)`,
    );
  }
  await Promise.all(suts.map((sut) => sut.stop()));
  const results = {
    command: commandLine(),
    quick: flags.quick,
    machine: await describeMachine(),
    plan,
    ratios,
    rounds,
  };
  const name = 'latest-account-cache';
  await writeFile(join(RESULTS_DIR, `${name}.json`), `${JSON.stringify(results, null, 2)}\n`);
  const lines = [
    `# \`GET /me\` with the account cache: \`${results.command}\``,
    '',
    'Requests per second of two PostgreSQL instances over one SQLite process on the same machine,',
    'median of the rounds (goal of issue 41: `pg-cache` at least 1.0).',
    '',
    '| Service | / sqlite (median) | per round |',
    '| ------- | ----------------- | --------- |',
    ...Object.entries(ratios).map(
      ([label, { median: middle, perRound }]) =>
        `| ${label} | ${round(middle, 3)} | ${perRound.map((ratio) => round(ratio, 3)).join(', ')} |`,
    ),
    '',
    '| Round | Service | req/s | p50 ms | p99 ms | CPU ms/req | other cores |',
    '| ----- | ------- | ----- | ------ | ------ | ---------- | ----------- |',
    ...rounds.flatMap(({ round: number, runs }) =>
      Object.entries(runs).map(([label, run]) => `| ${number} | ${label} | ${runCells(run)} |`),
    ),
    '',
    `Machine: ${JSON.stringify(results.machine)}`,
    '',
  ];
  await writeFile(join(RESULTS_DIR, `${name}.md`), lines.join('\n'));
  log(`done: ${join(RESULTS_DIR, `${name}.md`)}`);
}

/** Spawn → first answer, on a fresh database each time, one process at a time. */
async function measureStartup(tmp, secret) {
  const samplesMs = [];
  const otherCores = [];
  for (let i = 0; i < plan.startups; i++) {
    const database = await newDatabase(tmp, 'startup');
    try {
      const port = await freePort();
      const busyBefore = machineBusySeconds();
      const ownBefore = process.cpuUsage();
      const spawned = performance.now();
      const handle = spawnService({ tmp, secret, port, database, name: `startup-${i + 1}` });
      const answered = await waitForFirstAnswer(handle);
      const own = process.cpuUsage(ownBefore);
      const other =
        machineBusySeconds() - busyBefore - cpuSeconds(handle.pid) - (own.user + own.system) / 1e6;
      samplesMs.push(answered - spawned);
      otherCores.push(Math.max(0, other) / ((answered - spawned) / 1000));
      await handle.stop();
    } finally {
      await database.drop();
    }
  }
  return { samplesMs, medianMs: median(samplesMs), otherCoresMedian: median(otherCores) };
}

/**
 * The service: one instance on SQLite, two on one PostgreSQL database; `env` adds settings
 * (the session check's run is the same service with one setting more, on its own database).
 */
async function startService(tmp, secret, { label = 'service', env = {}, engine = mode } = {}) {
  const database = await newDatabase(tmp, label, engine);
  cleanups.push(() => database.drop());
  const instances = engine === 'pg' ? 2 : 1;
  const handles = [];
  for (let i = 1; i <= instances; i++) {
    const port = await freePort();
    handles.push(
      spawnService({ tmp, secret, port, database, name: `${label}-${i}`, share: instances, env }),
    );
  }
  // Started together on purpose: on PostgreSQL the migration lock makes them take turns.
  await Promise.all(handles.map((handle) => waitForFirstAnswer(handle)));
  log(`${label} up: ${handles.map((h) => `${h.name} pid ${h.pid} ${h.url}`).join(', ')}`);
  const sut = makeSut(label, handles, engine === 'pg');
  return { ...sut, stop: () => Promise.all(handles.map((handle) => handle.stop())) };
}

async function startBaseline(tmp, secret) {
  if (mode === 'pg') {
    return startPostgresBaseline(secret);
  }
  const port = await freePort();
  const database = sqliteDatabase(tmp, 'baseline');
  const handle = spawnBaseline({
    tmp,
    secret,
    port,
    entry: BASELINE_ENTRY,
    db: database.connectionString,
    name: 'baseline',
  });
  await waitForFirstAnswer(handle);
  log(`baseline up: pid ${handle.pid} ${handle.url}`);
  return makeSut('baseline', [handle], false);
}

/** Two instances of the PostgreSQL baseline on a database of their own on the same server. */
async function startPostgresBaseline(secret, { label = 'baseline', connectionString } = {}) {
  let db = connectionString;
  if (db === undefined) {
    const database = await postgresDatabase(label);
    cleanups.push(() => database.drop());
    db = database.connectionString;
  }
  const handles = [];
  for (let i = 1; i <= (connectionString === undefined ? 2 : 1); i++) {
    const port = await freePort();
    handles.push(
      spawnBaseline({
        tmp: tmpDir,
        secret,
        port,
        entry: PG_BASELINE_ENTRY,
        db,
        name: `${label}-${i}`,
      }),
    );
  }
  await Promise.all(handles.map((handle) => waitForFirstAnswer(handle)));
  log(`${label} up: ${handles.map((h) => `${h.name} pid ${h.pid} ${h.url}`).join(', ')}`);
  const sut = makeSut(label, handles, true);
  return { ...sut, stop: () => Promise.all(handles.map((handle) => handle.stop())) };
}

function spawnBaseline({ tmp, secret, port, entry, db, name }) {
  return spawnNode({
    name,
    // eslint-disable-next-line no-restricted-syntax -- the child needs PATH and nothing else.
    env: { PATH: process.env.PATH ?? '' },
    args: [entry, '--port', String(port), '--db', db, '--secret', secret],
    cwd: tmp,
    port,
    logFile: join(tmp, `${name}.log`),
  });
}

/**
 * Round trips to PostgreSQL per request, service and baseline: one instance of each, connected
 * through a relay that counts them (bench/lib/round-trips.mjs), requests sent one at a time.
 * The service's count includes its audit row (one INSERT per event, written after the answer).
 */
async function measureRoundTrips(tmp, secret) {
  const counter = await startRoundTripCounter({ host: '127.0.0.1', port: 5432 });
  cleanups.push(() => counter.close());
  const viaCounter = (connectionString) => {
    const url = new URL(connectionString);
    url.port = String(counter.port);
    return url.toString();
  };
  const serviceDb = await postgresDatabase('round_trips');
  cleanups.push(() => serviceDb.drop());
  const port = await freePort();
  const service = spawnService({
    tmp,
    secret,
    port,
    database: { connectionString: viaCounter(serviceDb.connectionString) },
    name: 'round-trips-service',
  });
  await waitForFirstAnswer(service);
  const baselineDb = await postgresDatabase('round_trips_baseline');
  cleanups.push(() => baselineDb.drop());
  const baseline = await startPostgresBaseline(secret, {
    label: 'round-trips-baseline',
    connectionString: viaCounter(baselineDb.connectionString),
  });
  const result = {};
  for (const [label, url] of [
    ['service', service.url],
    ['baseline', baseline.url],
  ]) {
    result[label] = await countRoundTrips(counter, url, label);
    log(
      `round trips per request, ${label}: ` +
        Object.entries(result[label])
          .map(([name, value]) => `${name} ${round(value, 2)}`)
          .join(', '),
    );
  }
  await service.stop();
  await baseline.stop();
  return result;
}

async function countRoundTrips(counter, url, label) {
  const n = flags.quick ? 2 : 4;
  const password = 'S3cure!bench-pass';
  const accounts = [];
  const tokens = [];
  const json = { 'content-type': 'application/json' };
  const keep = (text) => {
    const body = JSON.parse(text);
    accounts.push(body);
    tokens.push(body.refreshToken);
  };
  const register = (i) => ({
    method: 'POST',
    path: '/api/auth/register',
    headers: json,
    body: JSON.stringify({ username: 'rt', email: `rt-${label}-${i}@example.com`, password }),
    expect: 201,
  });
  register.onBody = (_i, text) => keep(text);
  const login = (i) => ({
    method: 'POST',
    path: '/api/auth/login',
    headers: json,
    body: JSON.stringify({ email: `rt-${label}-${i % n}@example.com`, password }),
    expect: 200,
  });
  login.onBody = (_i, text) => tokens.push(JSON.parse(text).refreshToken);
  const me = (i) => ({
    method: 'GET',
    path: '/api/auth/me',
    headers: { authorization: `Bearer ${accounts[i % accounts.length].accessToken}` },
    expect: 200,
  });
  const refresh = () => ({
    method: 'POST',
    path: '/api/auth/refresh',
    headers: json,
    body: JSON.stringify({ refreshToken: tokens.shift() }),
    expect: 200,
  });
  refresh.onBody = (_i, text) => tokens.push(JSON.parse(text).refreshToken);
  const counts = {
    register: (await roundTripsPerRequest(counter, url, n, register)).perRequest,
    login: (await roundTripsPerRequest(counter, url, n, login)).perRequest,
    me: (await roundTripsPerRequest(counter, url, 50, me)).perRequest,
    refresh: (await roundTripsPerRequest(counter, url, 50, refresh)).perRequest,
  };
  if (label === 'service') {
    const revoke = (i) => ({
      method: 'POST',
      path: '/api/auth/revoke',
      headers: { ...json, authorization: `Bearer ${accounts[i % accounts.length].accessToken}` },
      body: JSON.stringify({ refreshToken: accounts[i % accounts.length].refreshToken }),
      expect: 200,
    });
    counts.revoke = (await roundTripsPerRequest(counter, url, n, revoke)).perRequest;
  }
  return counts;
}

/** `share`: how many instances the machine's cores are split between. */
function spawnService({ tmp, secret, port, database, name, share, env: extra = {} }) {
  const env = {
    ...serviceEnv({ port, secret, connectionString: database.connectionString }),
    Database__SqliteSynchronous: flags['sqlite-synchronous'],
    ...extra,
  };
  if (share > 1) {
    // As an operator would set it for instances sharing a host: each hashes on its share of
    // the cores, so that together they never hash on more cores than there are.
    env.PasswordHashing__Concurrency = String(
      Math.max(1, Math.floor(availableParallelism() / share)),
    );
  }
  return spawnNode({
    name,
    env,
    args: [SERVICE_ENTRY],
    cwd: tmp,
    port,
    logFile: join(tmp, `${name}.log`),
  });
}

function newDatabase(tmp, label, engine = mode) {
  return engine === 'pg' ? postgresDatabase(label) : sqliteDatabase(tmp, label);
}

function makeSut(label, handles, usesPostgres) {
  return {
    label,
    targets: handles,
    pids: handles.map((handle) => handle.pid),
    usesPostgres,
    state: createState(label),
    url: handles[0].url,
  };
}

/** Seeds accounts and tokens through the API, then warms the hot paths up. */
async function prepare(sut) {
  await seed(sut.state, sut.url, plan.seedUsers);
  await warmUp(
    sut,
    { connections: plan.connections, requests: () => meRequests(sut.state) },
    2_000,
  );
  await ensureRefreshTokens(sut.state, sut.url, 2 * plan.connections);
  await warmUp(
    sut,
    { connections: plan.connections, requests: () => [refreshRequest(sut.state)] },
    1_000,
  );
  log(`${sut.label} seeded (${sut.state.users.length} users) and warmed up`);
}

/**
 * Rounds of every endpoint on both servers. Within a round each endpoint runs on one server
 * then the other, and the first of the pair swaps every round, so slow drift (thermal, page
 * cache, table growth) does not favour one side. Nothing else runs during a measurement.
 */
async function runRounds(suts) {
  const rounds = [];
  for (let number = 1; number <= plan.rounds; number++) {
    await allIdle(suts);
    const ceiling = await measurePbkdf2Ceiling(plan.ceilingMs);
    log(`round ${number} PBKDF2 ceiling ${round(ceiling.hashesPerSecond, 2)} hashes/s`);
    const runs = {};
    const order = number % 2 === 1 ? suts : [...suts].reverse();
    for (const endpoint of ENDPOINTS) {
      runs[endpoint.name] = {};
      for (const sut of order) {
        const run = await measureEndpoint(sut, suts, endpoint);
        runs[endpoint.name][sut.label] = run;
        log(
          `round ${number} ${endpoint.name.padEnd(8)} ${sut.label.padEnd(8)} ${describeRun(run)}`,
        );
      }
    }
    rounds.push({ round: number, ceiling, runs });
  }
  return rounds;
}

/**
 * GET /me on the service as configured by default and with Jwt__RequireActiveSession=true, side
 * by side in every round (the first of the pair swapping each round), so that the difference in
 * CPU time per request is what one session check costs.
 */
async function measureSessionCheck(service, checked, all) {
  const me = ENDPOINTS.find((endpoint) => endpoint.name === 'me');
  const rounds = [];
  for (let number = 1; number <= plan.rounds; number++) {
    const runs = {};
    for (const sut of number % 2 === 1 ? [service, checked] : [checked, service]) {
      runs[sut.label] = await measureEndpoint(sut, all, me);
      log(`round ${number} me       ${sut.label.padEnd(13)} ${describeRun(runs[sut.label])}`);
    }
    rounds.push({ round: number, off: runs[service.label], on: runs[checked.label] });
  }
  return rounds;
}

async function measureEndpoint(sut, suts, endpoint) {
  if (endpoint.name === 'refresh') {
    await ensureRefreshTokens(sut.state, sut.url, 2 * plan.connections);
  }
  await allIdle(suts);
  const starvedBefore = sut.state.refreshTokens.starved;
  const { window, load } = await measureEndpointWindow(sut, endpoint, plan);
  return {
    ...load,
    harnessCores: window.harnessCpuSeconds / load.seconds,
    otherCores: window.otherCpuSeconds / load.seconds,
    cpuMsPerRequest: (window.cpuSeconds * 1000) / load.requests,
    dbCpuMsPerRequest:
      window.dbCpuSeconds === null ? null : (window.dbCpuSeconds * 1000) / load.requests,
    peakRssMiB: window.peakRssMiB,
    poolStarved: sut.state.refreshTokens.starved - starvedBefore,
  };
}

function describeRun(run) {
  return (
    `${round(run.rps, 1)} req/s, p50 ${round(run.p50, 1)} ms, p99 ${round(run.p99, 1)} ms, ` +
    `${round(run.cpuMsPerRequest, 3)} ms CPU/req, non-2xx ${run.non2xx}`
  );
}

/** GET /me at a modest fixed rate while a login flood keeps every core hashing. */
async function measureFlood(sut, suts) {
  await allIdle(suts);
  const window = await measureWindow(sut, {
    loads: [
      {
        name: 'me',
        connections: plan.floodMeConnections,
        overallRate: plan.meRate,
        requests: () => meRequests(sut.state),
      },
      {
        name: 'login',
        connections: plan.floodConnections,
        requests: () => [loginRequest(sut.state)],
      },
    ],
    warmupMs: 1_000,
    windowMs: plan.floodWindowMs,
  });
  log(
    `flood ${sut.label}: /me p99 ${round(window.loads.me.p99, 1)} ms at ${round(window.loads.me.rps)} req/s, ` +
      `logins ${round(window.loads.login.rps, 2)}/s`,
  );
  return { ...window.loads, otherCores: window.otherCpuSeconds / window.loads.me.seconds };
}

/**
 * RSS and open descriptors of the service before and after a long mixed load. Both are read
 * with no load connection open (after the server went idle and sockets closed), so a
 * difference is what the requests left behind. A short run of the same mix comes first, so
 * that "before" already has what a warm server legitimately holds (a PostgreSQL pool grown to
 * its size, JIT code, caches) and only growth beyond that shows.
 */
async function measureStability(sut, suts) {
  const load = {
    name: 'mixed',
    connections: plan.connections,
    requests: () => mixedRequests(sut.state),
  };
  await ensureRefreshTokens(sut.state, sut.url, 4 * plan.connections);
  await allIdle(suts);
  await warmUp(sut, load, 2_000);
  await waitUntilIdle(sut);
  await delay(500);
  sut.pids.forEach((pid) => resetPeakRss(pid));
  const starvedBefore = sut.state.refreshTokens.starved;
  const before = sut.targets.map((t) => ({ ...memoryMiB(t.pid), fds: openFds(t.pid) }));
  // RSS every second, to tell a plateau (heap sized to the load) from steady growth (a leak).
  const started = performance.now();
  const rssTrace = [];
  const sampler = setInterval(() => {
    const rss = sut.targets.map((t) => round(memoryMiB(t.pid).rss, 1));
    rssTrace.push({ seconds: round((performance.now() - started) / 1000, 1), rss });
  }, 1_000);
  const run = await runAmount(sut, {
    load,
    amount: plan.stabilityRequests,
    maxMs: plan.stabilityMaxMs,
  }).finally(() => clearInterval(sampler));
  await waitUntilIdle(sut);
  await delay(1_000);
  const processes = sut.targets.map((t, i) => {
    const after = memoryMiB(t.pid);
    return {
      name: t.name,
      rssBefore: before[i].rss,
      rssAfter: after.rss,
      anonGrowth: after.anon - before[i].anon,
      fileGrowth: after.file - before[i].file,
      peak: after.peak,
      fdsBefore: before[i].fds,
      fdsAfter: openFds(t.pid),
    };
  });
  const stability = {
    ...run,
    planned: plan.stabilityRequests,
    poolStarved: sut.state.refreshTokens.starved - starvedBefore,
    otherCores: run.otherCpuSeconds / run.seconds,
    maxSeconds: plan.stabilityMaxMs / 1000,
    processes,
    rssTrace,
    rssGrowthMiB: Math.max(...processes.map((p) => p.rssAfter - p.rssBefore)),
    fdGrowth: processes.reduce((sum, p) => sum + p.fdsAfter - p.fdsBefore, 0),
  };
  log(
    `stability: ${run.requests} requests in ${round(run.seconds, 1)} s, RSS growth ` +
      `${round(stability.rssGrowthMiB, 1)} MiB, fd growth ${stability.fdGrowth}`,
  );
  return stability;
}

async function allIdle(suts) {
  for (const sut of suts) {
    await waitUntilIdle(sut);
  }
}

function notes() {
  return [
    'The service is the built `dist/main.js` with NODE_ENV=production, a 48-character Jwt__SecretKey, ' +
      'TokenCleanup__Enabled=false and the default PBKDF2 cost (600,000 iterations); its log goes to a file. ' +
      (mode === 'pg'
        ? 'The baseline (bench/baseline-pg.mjs) is plain Fastify + `pg` named statements + node:crypto doing the ' +
          'same work with the same response shapes and the same atomic guarantees (a refresh is one statement ' +
          'that revokes the presented token only if still active and inserts its successor; registration and ' +
          'login write the account and the token in one statement), two instances on a database of its own on ' +
          'the same PostgreSQL server. It writes no audit trail and counts no lockouts.'
        : 'The baseline (bench/baseline.mjs) is plain Fastify + better-sqlite3 + node:crypto doing the same work ' +
          'with the same response shapes, on the same table layout, WAL and synchronous=NORMAL.'),
    'Load: autocannon in the harness process, which shares the 2 cores with the server under test; both ' +
      'servers pay that equally. Latencies are raw per-response times (no coordinated-omission correction).',
    'CPU per request: utime+stime of the server process(es) from /proc/<pid>/stat over the measured window, ' +
      'divided by the responses in it. Peak RSS: VmHWM from /proc/<pid>/status, reset before each window ' +
      'through /proc/<pid>/clear_refs.',
    'RSS growth is RSS after the mixed load minus RSS before it, both read with the server idle. V8 grows ' +
      'its heap lazily and collects it in large steps, so this figure moves by tens of MiB from run to run; ' +
      'the per-second trace tells a plateau from steady growth. The growth is split into anonymous memory ' +
      "(RssAnon: the V8 heap, SQLite's page cache, which fills up to Database__SqliteCacheSizeMb as the " +
      'database grows, buffers) and file pages (RssFile: code and database pages read through the memory ' +
      'mapping, which the kernel takes back under pressure).',
    'Between runs the harness waits until every server is idle: a stopped login load leaves accepted ' +
      'requests hashing, which must not spill into the next measurement.',
    'Session check: GET /me on a second copy of the service started with Jwt__RequireActiveSession=true ' +
      '(its own database, seeded the same way), measured right before or after the default one in each ' +
      'round; the extra CPU per request is the median of the per-round differences.',
    'Logins rotate over the seeded accounts (32): the service serialises logins per account, so one account ' +
      'would measure that lock, not the hashing. Each refresh presents a token never used before, taken from a ' +
      'pool that every successful refresh, login and registration refills.',
    ...(mode === 'pg'
      ? [
          'PostgreSQL mode: two service instances on one fresh database, which is dropped at the end. The load is ' +
            'split between them by running one autocannon per instance with half the connections (and half of ' +
            'any rate); requests are added and latency percentiles are computed over the merged raw samples. ' +
            'A proxy was not used because on 2 cores its own CPU would be charged to the service. ' +
            '"PostgreSQL CPU" is the CPU of every postgres server process over the window, per request.',
        ]
      : []),
  ];
}

/** How this run was started, as a reader would type it. */
function commandLine() {
  const extra = [
    flags.pg && '--pg',
    flags.signing && '--signing',
    flags['account-cache'] && '--account-cache',
    flags.quick && '--quick',
    flags['sqlite-synchronous'] !== 'full' && `--sqlite-synchronous ${flags['sqlite-synchronous']}`,
    flags['round-trips'] && '--round-trips',
  ].filter(Boolean);
  return extra.length > 0 ? `npm run bench -- ${extra.join(' ')}` : 'npm run bench';
}

async function describeMachine() {
  const cpuModel =
    /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown';
  return {
    nproc: execFileSync('nproc', { encoding: 'utf8' }).trim(),
    availableParallelism: availableParallelism(),
    cpuModel,
    node: process.version,
    kernel: release(),
    date: new Date().toISOString(),
    postgres: mode === 'pg' ? await postgresVersion() : null,
  };
}

async function postgresVersion() {
  const client = new pg.Client({ connectionString: POSTGRES_SERVER_URL });
  await client.connect();
  try {
    return `PostgreSQL ${(await client.query('SHOW server_version')).rows[0].server_version}`;
  } finally {
    await client.end();
  }
}

async function cleanUp(failed) {
  await stopAll();
  for (const undo of cleanups.reverse()) {
    await undo(failed).catch((error) => log(`clean-up step failed: ${error.message}`));
  }
}

/** The run stops by itself: past this, something hangs, and the harness gives up cleanly. */
const WATCHDOG_MS = 10 * 60 * 1000;
const watchdog = setTimeout(() => {
  log(`still running after ${WATCHDOG_MS / 60_000} minutes: aborting`);
  void cleanUp(true).finally(() => process.exit(2));
}, WATCHDOG_MS);
process.once('SIGINT', () => {
  log('interrupted: stopping servers and cleaning up');
  void cleanUp(true).finally(() => process.exit(130));
});

try {
  await main();
  process.exitCode = 0;
} catch (error) {
  log(`failed: ${error.stack ?? error}`);
  process.exitCode = 1;
} finally {
  await cleanUp(process.exitCode !== 0);
  clearTimeout(watchdog);
}
