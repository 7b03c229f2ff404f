// `npm run bench -- --scale [--pg]`: the service on a large database (1,000,000 users, 5,000,000
// refresh tokens in realistic states, 5,000,000 audit rows, loaded straight into the database)
// against the same service on an empty one, in the same run: SQLite files, or with --pg two
// databases on the local PostgreSQL server (one service instance each), dropped at the end.
// Writes bench/results/latest-scale{,-pg}.md and .json. See bench/README.md (Scale run).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, release, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { setTimeout as delay } from 'node:timers/promises';
import { URL, fileURLToPath } from 'node:url';
import { getJson, postJson, postStatus } from './lib/api.mjs';
import { postgresDatabase, sqliteDatabase } from './lib/databases.mjs';
import { measureWindow, runAmount, waitUntilIdle, warmUp } from './lib/load.mjs';
import { machineBusySeconds, memoryMiB } from './lib/proc.mjs';
import {
  SERVICE_ENTRY,
  freePort,
  serviceEnv,
  spawnNode,
  stopAll,
  waitForFirstAnswer,
} from './lib/processes.mjs';
import * as pgData from './lib/scale-data-pg.mjs';
import * as sqliteData from './lib/scale-data.mjs';
import {
  createState,
  ensureRefreshTokens,
  loginRequest,
  meRequests,
  refreshRequest,
  seed,
} from './lib/scenarios.mjs';
import { median, round } from './lib/stats.mjs';

const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));
const CLI_ENTRY = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const PASSWORD = 'S3cure!scale-pass';
/** Above the 1,000 sessions of one loaded account (the default limit is 100). */
const SESSION_LIMIT = 2_000;

const FULL = {
  users: 1_000_000,
  tokens: 5_000_000,
  auditRows: 5_000_000,
  sessionsOfOne: 1_000,
  chainLength: 10_000,
  rounds: 2,
  connections: 20,
  warmupMs: 1_000,
  fastWindowMs: 3_000,
  hashWindowMs: 3_000,
  seedUsers: 32,
  startups: 3,
  timedReads: 5,
  growthRequests: 10_000,
  purgeWindowMs: 60_000,
  purgeMeRate: 200,
};
const QUICK = {
  ...FULL,
  users: 10_000,
  tokens: 50_000,
  auditRows: 50_000,
  rounds: 1,
  fastWindowMs: 1_000,
  hashWindowMs: 1_500,
  seedUsers: 8,
  startups: 1,
  growthRequests: 1_000,
  purgeWindowMs: 5_000,
};

/**
 * What differs between the engines: the loader and its size queries, how a database is made,
 * and the results' names. PostgreSQL runs one service instance per database (the --pg
 * throughput run's two per database would need two more processes on the 2 cores).
 */
const ENGINES = {
  sqlite: {
    name: 'SQLite',
    data: sqliteData,
    newDatabase: (tmp, label) => sqliteDatabase(tmp, label),
    databaseBytes: (database) => fileBytes(database.connectionString),
    sizeSource: "SQLite's `dbstat`",
    results: 'latest-scale',
    command: 'npm run bench -- --scale',
  },
  pg: {
    name: 'PostgreSQL',
    data: pgData,
    newDatabase: (_tmp, label) => postgresDatabase(`scale_${label}`),
    databaseBytes: (database) => pgData.databaseBytes(database.connectionString),
    sizeSource: '`pg_relation_size`',
    results: 'latest-scale-pg',
    command: 'npm run bench -- --scale --pg',
  },
};

const log = (message) =>
  process.stdout.write(`[scale ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

/** Runs the scale run; resolves with the process exit code. */
export async function runScale({ pg = false, quick = false }) {
  const engine = pg ? ENGINES.pg : ENGINES.sqlite;
  const { data } = engine;
  const plan = quick ? QUICK : FULL;
  const started = performance.now();
  const loadAverageAtStart = loadavg();
  const tmp = await mkdtemp(join(tmpdir(), 'keygate-scale-'));
  const secret = randomBytes(36).toString('base64url');
  let failed = true;
  // PostgreSQL databases live outside the temporary folder: dropped at the end whatever
  // happens, an interrupt included.
  // An interrupt and the run's own way out may both get here: each database is dropped once,
  // and both wait for the same drops (the process exits only after them).
  const databases = [];
  let purge = null;
  let interrupted = false;
  const dropDatabases = async () => {
    purge?.child.kill('SIGTERM');
    await stopAll();
    const dropped = await Promise.allSettled(
      databases.map((database) => (database.dropped ??= database.drop())),
    );
    dropped
      .filter((outcome) => outcome.status === 'rejected')
      .forEach((outcome) => log(`dropping a database failed: ${outcome.reason}`));
  };
  const onInterrupt = () => {
    interrupted = true;
    log('interrupted: stopping the services and dropping the databases');
    void dropDatabases().finally(() => process.exit(130));
  };
  if (pg) {
    process.once('SIGINT', onInterrupt);
  }
  try {
    log(
      `${engine.name}, temp ${tmp}${quick ? ' (quick: figures are not meaningful)' : ''}; ` +
        `load average ${loadavg()
          .map((v) => round(v, 2))
          .join(', ')}`,
    );
    // A SQLite file stays in the temporary folder when the run fails; PostgreSQL's are dropped.
    const keep = (database) => {
      if (pg) {
        databases.push(database);
        if (interrupted) {
          throw new Error('interrupted');
        }
      }
      return database;
    };
    const empty = keep(await engine.newDatabase(tmp, 'empty'));
    const large = keep(await engine.newDatabase(tmp, 'large'));

    // The large file: migrated by the service itself, one account registered through the API
    // (its password hash is given to every loaded user), then loaded directly.
    const loader = await startService(tmp, secret, large, 'loader');
    const template = `template-${Date.now()}@example.com`;
    await postJson(loader.url, '/api/auth/register', {
      username: 'template',
      email: template,
      password: PASSWORD,
    });
    await loader.stop();
    const passwordHash = await data.passwordHashOf(large.connectionString, template);
    const loadStarted = performance.now();
    const loaded = await data.loadScaleData(large.connectionString, {
      ...plan,
      passwordHash,
      nowMs: Date.now(),
      log,
    });
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    const sizeAfterLoad = await engine.databaseBytes(large);
    log(
      `loaded ${JSON.stringify(loaded.rows)} in ${round(loadSeconds, 0)} s; ` +
        `${round(sizeAfterLoad / 2 ** 20, 0)} MiB; ${loaded.purgeable} tokens past retention`,
    );

    const startup = { empty: [], large: [] };
    for (let i = 0; i < plan.startups; i++) {
      for (const [label, database] of [
        ['empty', empty],
        ['large', large],
      ]) {
        const spawned = performance.now();
        const handle = await startService(tmp, secret, database, `startup-${label}-${i + 1}`);
        startup[label].push(handle.answeredAt - spawned);
        await handle.stop();
      }
    }
    log(
      `start-up median: empty ${round(median(startup.empty), 0)} ms, large ${round(median(startup.large), 0)} ms`,
    );

    const suts = {
      empty: makeSut('empty', await startService(tmp, secret, empty, 'empty'), pg),
      large: makeSut('large', await startService(tmp, secret, large, 'large'), pg),
    };
    const rssAtStart = memoryMiB(suts.large.pids[0]).rss;
    for (const sut of Object.values(suts)) {
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
        2_000,
      );
    }

    const endpoints = [
      { name: 'login', windowMs: plan.hashWindowMs, requests: (s) => [loginRequest(s)] },
      { name: 'me', windowMs: plan.fastWindowMs, requests: (s) => meRequests(s) },
      { name: 'refresh', windowMs: plan.fastWindowMs, requests: (s) => [refreshRequest(s)] },
    ];
    const rounds = [];
    for (let number = 1; number <= plan.rounds; number++) {
      const order = number % 2 === 1 ? ['empty', 'large'] : ['large', 'empty'];
      const runs = {};
      for (const endpoint of endpoints) {
        runs[endpoint.name] = {};
        for (const label of order) {
          const sut = suts[label];
          await waitUntilIdle(sut);
          await ensureRefreshTokens(sut.state, sut.url, 4 * plan.connections);
          const busyBefore = machineBusySeconds();
          const measured = await measureWindow(sut, {
            loads: [
              {
                name: endpoint.name,
                connections: plan.connections,
                requests: () => endpoint.requests(sut.state),
              },
            ],
            warmupMs: plan.warmupMs,
            windowMs: endpoint.windowMs,
          });
          const load = measured.loads[endpoint.name];
          runs[endpoint.name][label] = {
            rps: load.rps,
            p50: load.p50,
            p99: load.p99,
            non2xx: load.non2xx,
            errors: load.errors,
            cpuMsPerRequest: (measured.cpuSeconds * 1000) / Math.max(1, load.requests),
            otherCores: measured.otherCpuSeconds / (endpoint.windowMs / 1000),
            machineBusy: machineBusySeconds() - busyBefore,
          };
          log(
            `round ${number} ${endpoint.name.padEnd(7)} ${label.padEnd(5)} ${round(load.rps, 0)} req/s ` +
              `p99 ${round(load.p99, 1)} ms, non-2xx ${load.non2xx}, errors ${load.errors}`,
          );
        }
      }
      rounds.push(runs);
    }
    const ratios = Object.fromEntries(
      endpoints.map(({ name }) => [
        name,
        median(rounds.map((runs) => runs[name].large.rps / runs[name].empty.rps)),
      ]),
    );

    // The account with many sessions lists them; the long chain's next-to-last token is
    // presented again (reuse: the chain's newest token is revoked).
    const many = await postJson(suts.large.url, '/api/auth/login', {
      email: loaded.manySessionsEmail,
      password: PASSWORD,
    });
    const listing = [];
    let listed = 0;
    for (let i = 0; i < plan.timedReads; i++) {
      const t0 = performance.now();
      const body = await getJson(suts.large.url, '/api/auth/sessions', many.accessToken);
      listing.push(performance.now() - t0);
      listed = body.sessions.length;
    }
    const reuse = [];
    let reuseStatus = 0;
    for (let i = 0; i < plan.timedReads; i++) {
      const t0 = performance.now();
      reuseStatus = await postStatus(suts.large.url, '/api/auth/refresh', {
        refreshToken: loaded.reuseToken,
      });
      reuse.push(performance.now() - t0);
    }
    log(
      `listing ${listed} sessions: median ${round(median(listing), 1)} ms; reuse at the end of the ` +
        `${plan.chainLength}-long chain: first ${round(reuse[0], 1)} ms, median ${round(median(reuse), 1)} ms (status ${reuseStatus})`,
    );

    // Growth per request of every table and index, on the empty database, over refreshes
    // (each leaves a token row and an audit row).
    await waitUntilIdle(suts.empty);
    const sizesBefore = await data.tableSizes(empty.connectionString);
    const countsBefore = await data.rowCounts(empty.connectionString, [
      'sessions',
      'refresh_tokens',
      'auth_events',
    ]);
    await ensureRefreshTokens(suts.empty.state, suts.empty.url, 2 * plan.connections);
    const growthRun = await runAmount(suts.empty, {
      load: { connections: plan.connections, requests: () => [refreshRequest(suts.empty.state)] },
      amount: plan.growthRequests,
      maxMs: 120_000,
    });
    await waitUntilIdle(suts.empty);
    await delay(1_500); // the audit writer's last batch
    const sizesAfter = await data.tableSizes(empty.connectionString);
    const countsAfter = await data.rowCounts(empty.connectionString, [
      'sessions',
      'refresh_tokens',
      'auth_events',
    ]);
    const succeeded = growthRun.requests - growthRun.non2xx;
    const growth = Object.fromEntries(
      Object.keys(sizesAfter).map((name) => [
        name,
        ((sizesAfter[name] - (sizesBefore[name] ?? 0)) / Math.max(1, succeeded)) * 10_000,
      ]),
    );
    log(`growth per 10,000 refreshes (bytes): ${JSON.stringify(roundAll(growth))}`);

    // The CLI's purge on the large database, bounded in time, under /me and refresh load.
    await waitUntilIdle(suts.large);
    await ensureRefreshTokens(suts.large.state, suts.large.url, 8 * plan.connections);
    const before = (await data.rowCounts(large.connectionString, ['refresh_tokens']))
      .refresh_tokens;
    purge = runCli(tmp, secret, large, ['tokens:purge']);
    const purgeStarted = performance.now();
    const underPurge = await measureWindow(suts.large, {
      loads: [
        {
          name: 'me',
          connections: 10,
          overallRate: plan.purgeMeRate,
          requests: () => meRequests(suts.large.state),
        },
        {
          name: 'refresh',
          connections: 2,
          overallRate: 20,
          requests: () => [refreshRequest(suts.large.state)],
        },
      ],
      warmupMs: 0,
      windowMs: plan.purgeWindowMs,
    });
    const purgeFinished = purge.exited.isSettled;
    if (!purgeFinished) {
      purge.child.kill('SIGTERM');
    }
    const purgeExit = await purge.exited;
    // Until the CLI exited when it finished within the window, not the window's length.
    const purgeSeconds = (purge.exited.settledAt - purgeStarted) / 1000;
    const after = (await data.rowCounts(large.connectionString, ['refresh_tokens'])).refresh_tokens;
    const deleted = before - after;
    log(
      `purge: ${deleted} rows in ${round(purgeSeconds, 1)} s (${purgeFinished ? 'finished' : 'stopped at the window'}); ` +
        `/me p99 ${round(underPurge.loads.me.p99, 1)} ms, failed ${underPurge.loads.me.non2xx + underPurge.loads.me.errors}; ` +
        `refresh failed ${underPurge.loads.refresh.non2xx + underPurge.loads.refresh.errors}`,
    );

    const rssAtEnd = memoryMiB(suts.large.pids[0]).rss;
    const results = {
      command: `${engine.command}${quick ? ' --quick' : ''}`,
      engine: engine.name,
      instancesPerDatabase: 1,
      quick,
      machine: {
        nproc: availableParallelism(),
        node: process.version,
        kernel: release(),
        date: new Date().toISOString(),
        // Other work on the machine shows here (1, 5 and 15 minutes); above the core count,
        // processes queued for CPU during the run.
        loadAverage: loadavg(),
        loadAverageAtStart,
      },
      plan,
      load: { rows: loaded.rows, seconds: loadSeconds, purgeable: loaded.purgeable },
      databaseBytes: {
        afterLoad: sizeAfterLoad,
        atEnd: await engine.databaseBytes(large),
        emptyAtEnd: await engine.databaseBytes(empty),
      },
      startupMs: {
        empty: median(startup.empty),
        large: median(startup.large),
        samples: startup,
      },
      rounds,
      ratios,
      sessions: { listed, medianMs: median(listing), samplesMs: listing },
      reuseAtChainEnd: {
        status: reuseStatus,
        firstMs: reuse[0],
        medianMs: median(reuse),
        samplesMs: reuse,
      },
      growthPer10000Refreshes: { bytes: growth, rows: diff(countsBefore, countsAfter), succeeded },
      purge: {
        deleted,
        seconds: purgeSeconds,
        finished: purgeFinished,
        exitCode: purgeExit.code,
        stderr: purgeExit.stderr.slice(-500),
        me: underPurge.loads.me,
        refresh: underPurge.loads.refresh,
      },
      rssMiB: { largeAtStart: rssAtStart, largeAtEnd: rssAtEnd },
      elapsedSeconds: (performance.now() - started) / 1000,
    };
    writeResults(results, engine);
    failed = false;
    return 0;
  } catch (error) {
    log(`failed: ${error.stack ?? error}`);
    return interrupted ? 130 : 1;
  } finally {
    process.off('SIGINT', onInterrupt);
    await dropDatabases();
    if (failed) {
      log(`files and logs kept in ${tmp}`);
    } else {
      await rm(tmp, { recursive: true, force: true });
    }
  }
}

async function startService(tmp, secret, database, name) {
  const port = await freePort();
  const handle = spawnNode({
    name,
    env: {
      ...serviceEnv({ port, secret, connectionString: database.connectionString }),
      // The account with 1,000 sessions keeps them all when it logs in to list them.
      Sessions__MaxActivePerUser: String(SESSION_LIMIT),
    },
    args: [SERVICE_ENTRY],
    cwd: tmp,
    port,
    logFile: join(tmp, `${name}.log`),
  });
  handle.answeredAt = await waitForFirstAnswer(handle, 120_000);
  return handle;
}

function makeSut(label, handle, usesPostgres) {
  return {
    label,
    targets: [handle],
    pids: [handle.pid],
    usesPostgres,
    state: createState(label),
    url: handle.url,
  };
}

function runCli(tmp, secret, database, args) {
  const env = {
    // eslint-disable-next-line no-restricted-syntax -- the child needs PATH and nothing else.
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'production',
    NO_COLOR: '1',
    Jwt__SecretKey: secret,
    ConnectionStrings__DefaultConnection: database.connectionString,
  };
  const child = spawn(process.execPath, [CLI_ENTRY, ...args], {
    cwd: tmp,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) =>
    child.once('close', (code, signal) => {
      exited.isSettled = true;
      exited.settledAt = performance.now();
      resolve({ code, signal, stdout, stderr });
    }),
  );
  exited.isSettled = false;
  return { child, exited };
}

function fileBytes(path) {
  return ['', '-wal'].reduce((sum, suffix) => {
    try {
      return sum + statSync(path + suffix).size;
    } catch {
      return sum;
    }
  }, 0);
}

function diff(before, after) {
  return Object.fromEntries(Object.keys(after).map((key) => [key, after[key] - before[key]]));
}

function roundAll(object) {
  return Object.fromEntries(Object.entries(object).map(([key, value]) => [key, round(value, 0)]));
}

const mib = (bytes) => `${round(bytes / 2 ** 20, 0)} MiB`;
const ms = (value) => `${round(value, 1)} ms`;

function writeResults(results, engine) {
  const suffix = results.quick ? '-quick' : '';
  const json = join(RESULTS_DIR, `${engine.results}${suffix}.json`);
  const md = join(RESULTS_DIR, `${engine.results}${suffix}.md`);
  writeFileSync(json, `${JSON.stringify(results, null, 2)}\n`);
  const target = (name, measured, threshold, pass) =>
    `| ${name} | ${measured} | ${threshold} | ${pass ? 'pass' : 'FAIL'} |`;
  const purgeFailures =
    results.purge.me.non2xx +
    results.purge.me.errors +
    results.purge.refresh.non2xx +
    results.purge.refresh.errors;
  const lines = [
    `# Scale run (${engine.name})`,
    '',
    `\`${results.command}\`, ${results.machine.date}, ${results.machine.nproc} cores, Node ${results.machine.node}.`,
    `Load average at the start: ${results.machine.loadAverageAtStart.map((v) => round(v, 1)).join(', ')}; at the end: ${results.machine.loadAverage.map((v) => round(v, 1)).join(', ')} (1, 5, 15 min) on ${results.machine.nproc} cores.`,
    'Where it exceeds the cores, other work shared the machine: absolute figures are noisy, and',
    'even the ratios (two services measured alternately in the same run) scatter.',
    '',
    `Large database: ${results.load.rows.users.toLocaleString('en')} users, ${results.load.rows.refresh_tokens.toLocaleString('en')} refresh tokens, ${results.load.rows.auth_events.toLocaleString('en')} audit rows; ${mib(results.databaseBytes.afterLoad)} after loading (${round(results.load.seconds, 0)} s), ${mib(results.databaseBytes.atEnd)} at the end${engine === ENGINES.pg ? ' (`pg_database_size`)' : ''}. Empty database at the end: ${mib(results.databaseBytes.emptyAtEnd)}.`,
    ...(engine === ENGINES.pg
      ? [
          '',
          'One service instance per database (the `--pg` throughput run uses two; two per database',
          'here would mean two more processes on the 2 cores). CPU per request includes the',
          'PostgreSQL server processes.',
        ]
      : []),
    '',
    '| Target | Measured | Threshold | Result |',
    '| --- | --- | --- | --- |',
    target(
      'GET /me throughput, large vs empty',
      `${round(results.ratios.me, 2)}×`,
      '≥ 0.8×',
      results.ratios.me >= 0.8,
    ),
    target(
      'POST /refresh throughput, large vs empty',
      `${round(results.ratios.refresh, 2)}×`,
      '≥ 0.8×',
      results.ratios.refresh >= 0.8,
    ),
    target(
      'POST /login throughput, large vs empty',
      `${round(results.ratios.login, 2)}×`,
      '≥ 0.8×',
      results.ratios.login >= 0.8,
    ),
    target(
      `Listing ${results.sessions.listed} sessions (median)`,
      ms(results.sessions.medianMs),
      '< 100 ms',
      results.sessions.medianMs < 100,
    ),
    target(
      'Reuse detection at the end of the 10,000-long chain (first)',
      ms(results.reuseAtChainEnd.firstMs),
      '< 100 ms',
      results.reuseAtChainEnd.firstMs < 100,
    ),
    target(
      'GET /me p99 during the CLI purge',
      ms(results.purge.me.p99),
      '< 50 ms',
      results.purge.me.p99 < 50,
    ),
    target('Failed requests during the CLI purge', String(purgeFailures), '0', purgeFailures === 0),
    target(
      'Start-up on the large database (median)',
      ms(results.startupMs.large),
      '< 2000 ms',
      results.startupMs.large < 2000,
    ),
    '',
    '## Throughput per round',
    '',
    '| Round | Endpoint | Empty req/s | Large req/s | Ratio | Empty p99 | Large p99 | Large CPU/request |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...results.rounds.flatMap((runs, i) =>
      Object.entries(runs).map(
        ([name, run]) =>
          `| ${i + 1} | ${name} | ${round(run.empty.rps, 0)} | ${round(run.large.rps, 0)} | ${round(run.large.rps / run.empty.rps, 2)} | ${ms(run.empty.p99)} | ${ms(run.large.p99)} | ${ms(run.large.cpuMsPerRequest)} |`,
      ),
    ),
    '',
    '## The expired-token cleanup (`npm run cli -- tokens:purge`) under load',
    '',
    `${results.purge.deleted.toLocaleString('en')} of ${results.load.purgeable.toLocaleString('en')} rows past retention deleted in ${round(results.purge.seconds, 1)} s` +
      ` (${round(results.purge.deleted / results.purge.seconds, 0)} rows/s; ${results.purge.finished ? 'finished' : `stopped after the ${results.plan.purgeWindowMs / 1000} s window`}).` +
      ` Meanwhile GET /me at ${results.plan.purgeMeRate}/s: p50 ${ms(results.purge.me.p50)}, p99 ${ms(results.purge.me.p99)}, max ${ms(results.purge.me.max)}, ${results.purge.me.non2xx} non-2xx, ${results.purge.me.errors} errors;` +
      ` refreshes: ${results.purge.refresh.requests} sent, p99 ${ms(results.purge.refresh.p99)}, ${results.purge.refresh.non2xx} non-2xx, ${results.purge.refresh.errors} errors.`,
    '',
    '## Growth per 10,000 refreshes (empty database)',
    '',
    `From ${engine.sizeSource}, before and after the refreshes.`,
    '',
    '| Table or index | Bytes |',
    '| --- | --- |',
    ...Object.entries(results.growthPer10000Refreshes.bytes)
      .filter(([, bytes]) => bytes !== 0)
      .map(([name, bytes]) => `| ${name} | ${round(bytes, 0).toLocaleString('en')} |`),
    '',
    `Rows per 10,000 refreshes: ${JSON.stringify(results.growthPer10000Refreshes.rows)} (of ${results.growthPer10000Refreshes.succeeded} successful).`,
    '',
    '## Other figures',
    '',
    `- Start-up (median of ${results.plan.startups}): empty ${ms(results.startupMs.empty)}, large ${ms(results.startupMs.large)}.`,
    `- Resident memory of the large-database service: ${round(results.rssMiB.largeAtStart, 0)} MiB after start, ${round(results.rssMiB.largeAtEnd, 0)} MiB at the end${engine === ENGINES.pg ? '' : ' (mapped file pages included)'}.`,
    `- Sessions listed: ${results.sessions.listed}; samples ${results.sessions.samplesMs.map((v) => round(v, 1)).join(', ')} ms.`,
    `- Reuse detection answered ${results.reuseAtChainEnd.status}; samples ${results.reuseAtChainEnd.samplesMs.map((v) => round(v, 1)).join(', ')} ms.`,
    `- Run took ${round(results.elapsedSeconds, 0)} s. Every figure: [${engine.results}${suffix}.json](${engine.results}${suffix}.json).`,
    '',
  ];
  writeFileSync(md, lines.join('\n'));
  log(`results: ${md}`);
}
