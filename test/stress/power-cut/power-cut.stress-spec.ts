import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { hashRefreshToken } from '../../../src/tokens/storage/refresh-token-value.js';
import { TEST_SECRET_KEY } from '../../utils/create-test-app.js';
import { LOGIN, REFRESH, REGISTER, REVOKE } from '../../utils/routes.js';
import { startServer, stopAllServers, type ServerProcess } from '../../utils/spawn-server.js';
import { describeOnSqlite } from '../../utils/test-database.js';
import { filesAt, readJournal, type CutVariant, type JournalRecord } from './journal.js';

// Power cuts, simulated: the service runs with powercut.c preloaded, which journals every write and
// fsync of its database files; it is killed at a random instant, and the files are rebuilt as a disk
// could hold them then (only what was fsynced, or that plus a random part of the rest, sector by
// sector). Besides that real cut, each run is also cut "virtually" at random earlier instants: the
// journal up to that instant gives the disk, and the answers received before it the acknowledged
// writes. Every acknowledged registration, failed login, rotation and logout must be on the disk.

const SOURCE = fileURLToPath(new URL('./powercut.c', import.meta.url));
const PASSWORD = 'S3cure!pass';
const WRONG_PASSWORD = 'Wrong!pass1';
const WORKERS = 6;
const VICTIMS_PER_WORKER = 6;
/** Below the lockout threshold, so a locked account never hides a counter. */
const FAILURES_PER_VICTIM = 4;
const CHAINS_PER_WORKER = 2;
const SESSIONS_PER_WORKER = 30;
const LOAD_MS = { min: 1_500, max: 3_000 };

type Mode = 'full' | 'normal';

interface Session {
  readonly accessToken: string;
  readonly refreshToken: string;
}

/** What the workers start from: accounts and sessions in the seed database. */
interface Seed {
  readonly files: ReadonlyMap<string, Buffer>;
  readonly victims: readonly string[][];
  readonly chains: readonly string[][];
  readonly sessions: readonly Session[][];
}

/** One request: when it left, and when its answer arrived (null: never acknowledged). */
interface Sent {
  readonly sentNs: bigint;
  ackNs: bigint | null;
}
interface Registration extends Sent {
  readonly email: string;
}
interface Failure extends Sent {
  readonly email: string;
}
interface Revocation extends Sent {
  readonly refreshToken: string;
}
interface Rotation extends Sent {
  readonly chain: string;
  readonly presented: string;
  successor: string | null;
}

interface Ledger {
  readonly registrations: Registration[];
  readonly failures: Failure[];
  readonly revocations: Revocation[];
  readonly rotations: Rotation[];
}

/** Acknowledged writes missing after a cut, by kind. */
interface Losses {
  registrations: number;
  failures: number;
  revocations: number;
  rotations: number;
}

const noLosses = (): Losses => ({ registrations: 0, failures: 0, revocations: 0, rotations: 0 });
const total = (losses: Losses): number =>
  losses.registrations + losses.failures + losses.revocations + losses.rotations;

/** A small seeded generator, so a failing run can be told apart and reasoned about. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

async function post(
  server: ServerProcess,
  path: string,
  body: unknown,
  accessToken?: string,
): Promise<{ status: number; body: Record<string, unknown> } | null> {
  try {
    const response = await fetch(`${server.baseUrl}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(accessToken === undefined ? {} : { authorization: `Bearer ${accessToken}` }),
      },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  } catch {
    // The process was killed under this request: it was never acknowledged.
    return null;
  }
}

function tokens(body: Record<string, unknown> | undefined): Session {
  const { accessToken, refreshToken } = body ?? {};
  if (typeof accessToken !== 'string' || typeof refreshToken !== 'string') {
    throw new Error(`no tokens in ${JSON.stringify(body)}`);
  }
  return { accessToken, refreshToken };
}

function baseEnv(databasePath: string): Record<string, string> {
  return {
    Jwt__SecretKey: TEST_SECRET_KEY,
    PasswordHashing__Iterations: '1000',
    ConnectionStrings__DefaultConnection: databasePath,
    Logging__Level: 'error',
  };
}

function readFiles(directory: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const name of readdirSync(directory)) {
    if (name.startsWith('keygate.db') && !name.endsWith('-shm')) {
      files.set(name, readFileSync(join(directory, name)));
    }
  }
  return files;
}

function writeFiles(directory: string, files: ReadonlyMap<string, Buffer>): void {
  mkdirSync(directory, { recursive: true });
  for (const [name, content] of files) {
    writeFileSync(join(directory, name), content);
  }
}

async function createSeed(directory: string): Promise<Seed> {
  mkdirSync(directory, { recursive: true });
  const server = await startServer({ env: baseEnv(join(directory, 'keygate.db')), cwd: directory });
  const register = async (email: string): Promise<Session> => {
    const response = await post(server, REGISTER, { username: 'seed', email, password: PASSWORD });
    expect(response?.status).toBe(201);
    return tokens(response?.body);
  };
  const victims: string[][] = [];
  const chains: string[][] = [];
  const sessions: Session[][] = [];
  for (let worker = 0; worker < WORKERS; worker += 1) {
    victims.push([]);
    chains.push([]);
    sessions.push([]);
    for (let i = 0; i < VICTIMS_PER_WORKER; i += 1) {
      const email = `victim-${worker}-${i}@example.com`;
      await register(email);
      victims[worker]?.push(email);
    }
    for (let i = 0; i < CHAINS_PER_WORKER; i += 1) {
      chains[worker]?.push((await register(`chain-${worker}-${i}@example.com`)).refreshToken);
    }
    const owner = `sessions-${worker}@example.com`;
    sessions[worker]?.push(await register(owner));
    while ((sessions[worker]?.length ?? 0) < SESSIONS_PER_WORKER) {
      const response = await post(server, LOGIN, { email: owner, password: PASSWORD });
      expect(response?.status).toBe(200);
      sessions[worker]?.push(tokens(response?.body));
    }
  }
  await server.stop('SIGTERM');
  return { files: readFiles(directory), victims, chains, sessions };
}

/** One worker: its own victims, chains and sessions, so no two requests ever race on one token. */
async function work(
  server: ServerProcess,
  seed: Seed,
  worker: number,
  ledger: Ledger,
  stop: { now: boolean },
): Promise<void> {
  const victims = [...(seed.victims[worker] ?? [])];
  const sessions = [...(seed.sessions[worker] ?? [])];
  const chains = (seed.chains[worker] ?? []).map((token, index) => ({
    id: `${worker}/${index}`,
    token,
  }));
  const failuresSent = new Map<string, number>();
  let step = 0;
  while (!stop.now) {
    step += 1;
    const sentNs = process.hrtime.bigint();
    switch (step % 4) {
      case 0: {
        const sent: Registration = { email: `u-${randomUUID()}@example.com`, sentNs, ackNs: null };
        ledger.registrations.push(sent);
        const response = await post(server, REGISTER, {
          username: 'load',
          email: sent.email,
          password: PASSWORD,
        });
        if (response?.status === 201) {
          sent.ackNs = process.hrtime.bigint();
        }
        break;
      }
      case 1: {
        const email = victims.find((v) => (failuresSent.get(v) ?? 0) < FAILURES_PER_VICTIM);
        if (email === undefined) {
          break;
        }
        failuresSent.set(email, (failuresSent.get(email) ?? 0) + 1);
        const sent: Failure = { email, sentNs, ackNs: null };
        ledger.failures.push(sent);
        const response = await post(server, LOGIN, { email, password: WRONG_PASSWORD });
        if (response?.status === 401 && response.body.message === 'Credenciales inválidas.') {
          sent.ackNs = process.hrtime.bigint();
        }
        break;
      }
      case 2: {
        const chain = chains[step % chains.length];
        if (chain === undefined) {
          break;
        }
        const sent: Rotation = {
          chain: chain.id,
          presented: chain.token,
          successor: null,
          sentNs,
          ackNs: null,
        };
        ledger.rotations.push(sent);
        const response = await post(server, REFRESH, { refreshToken: chain.token });
        if (response?.status === 200) {
          sent.ackNs = process.hrtime.bigint();
          sent.successor = tokens(response.body).refreshToken;
          chain.token = sent.successor;
        } else {
          // Unanswered: this chain's state is unknown now, so it takes no further part.
          chains.splice(chains.indexOf(chain), 1);
        }
        break;
      }
      default: {
        const session = sessions.shift();
        if (session === undefined) {
          break;
        }
        const sent: Revocation = { refreshToken: session.refreshToken, sentNs, ackNs: null };
        ledger.revocations.push(sent);
        const response = await post(
          server,
          REVOKE,
          { refreshToken: session.refreshToken },
          session.accessToken,
        );
        if (response?.status === 200) {
          sent.ackNs = process.hrtime.bigint();
        }
      }
    }
  }
}

const acknowledgedBy = (sent: Sent, cutNs: bigint): boolean =>
  sent.ackNs !== null && sent.ackNs <= cutNs;

/** Reads the rebuilt files as SQLite recovers them (WAL replayed) and counts what is missing. */
function lossesOnDisk(directory: string, ledger: Ledger, cutNs: bigint): Losses {
  const losses = noLosses();
  const db = new Database(join(directory, 'keygate.db'));
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const user = db.prepare<[string], { n: number }>(
      'SELECT failedLoginAttempts AS n FROM users WHERE email = ?',
    );
    // Revoked: rotated (an older generation than its session's) or its session ended.
    const token = db.prepare<[Buffer], { isRevoked: number }>(
      'SELECT (t.generation < s.generation OR s.endedAt IS NOT NULL) AS isRevoked ' +
        'FROM refresh_tokens t JOIN sessions s ON s.id = t.sessionId WHERE t.tokenHash = ?',
    );
    for (const sent of ledger.registrations) {
      if (acknowledgedBy(sent, cutNs) && user.get(sent.email) === undefined) {
        losses.registrations += 1;
      }
    }
    const acknowledged = new Map<string, number>();
    const sentBefore = new Map<string, number>();
    for (const sent of ledger.failures) {
      if (sent.sentNs <= cutNs) {
        sentBefore.set(sent.email, (sentBefore.get(sent.email) ?? 0) + 1);
      }
      if (acknowledgedBy(sent, cutNs)) {
        acknowledged.set(sent.email, (acknowledged.get(sent.email) ?? 0) + 1);
      }
    }
    for (const [email, count] of acknowledged) {
      const counted = user.get(email)?.n ?? 0;
      losses.failures += Math.max(0, count - counted);
      // Never more than was sent: a counter from nowhere would be corruption, not durability.
      expect(counted).toBeLessThanOrEqual(sentBefore.get(email) ?? 0);
    }
    for (const sent of ledger.revocations) {
      if (
        acknowledgedBy(sent, cutNs) &&
        token.get(hashRefreshToken(sent.refreshToken))?.isRevoked !== 1
      ) {
        losses.revocations += 1;
      }
    }
    for (const sent of ledger.rotations) {
      if (!acknowledgedBy(sent, cutNs) || sent.successor === null) {
        continue;
      }
      const presented = token.get(hashRefreshToken(sent.presented));
      const successor = token.get(hashRefreshToken(sent.successor));
      if (presented?.isRevoked !== 1 || successor === undefined) {
        losses.rotations += 1;
      }
    }
  } finally {
    db.close();
  }
  return losses;
}

/** The same promise through the restarted service: what its clients would see after the cut. */
async function lossesThroughService(
  server: ServerProcess,
  ledger: Ledger,
  cutNs: bigint,
): Promise<Losses> {
  const losses = noLosses();
  for (const sent of ledger.registrations) {
    if (acknowledgedBy(sent, cutNs)) {
      const response = await post(server, LOGIN, { email: sent.email, password: PASSWORD });
      if (response?.status !== 200) {
        losses.registrations += 1;
      }
    }
  }
  for (const sent of ledger.revocations) {
    if (acknowledgedBy(sent, cutNs)) {
      const response = await post(server, REFRESH, { refreshToken: sent.refreshToken });
      if (response?.status !== 401) {
        losses.revocations += 1;
      }
    }
  }
  // Per chain, its last acknowledged rotation: the successor works unless a later, unanswered
  // rotation may have used it; the presented token is refused either way.
  const chains = new Map<string, Rotation[]>();
  for (const sent of ledger.rotations) {
    chains.set(sent.chain, [...(chains.get(sent.chain) ?? []), sent]);
  }
  for (const rotations of chains.values()) {
    const last = rotations.findLastIndex((sent) => acknowledgedBy(sent, cutNs));
    const rotation = rotations[last];
    if (rotation?.successor === undefined || rotation.successor === null) {
      continue;
    }
    let isLost = false;
    if (last === rotations.length - 1) {
      const response = await post(server, REFRESH, { refreshToken: rotation.successor });
      isLost = response?.status !== 200;
    }
    const replay = await post(server, REFRESH, { refreshToken: rotation.presented });
    if (isLost || replay?.status !== 401) {
      losses.rotations += 1;
    }
  }
  return losses;
}

interface RunResult {
  readonly cuts: number;
  /** Per cut and variant, what was lost; empty when nothing was. */
  readonly findings: string[];
  readonly losses: Losses;
}

/**
 * One run: the service on a copy of the seed under `mode`, loaded by the workers, killed at a
 * random instant; then `virtualCuts` earlier instants and the kill itself are checked, each on the
 * durable files and (when `withSubsets`) on a random subset of the unsynced writes as well.
 */
async function powerCutRun(options: {
  readonly library: string;
  readonly seed: Seed;
  readonly directory: string;
  readonly mode: Mode;
  readonly virtualCuts: number;
  readonly withSubsets: boolean;
  readonly random: () => number;
}): Promise<RunResult> {
  const { directory, random, seed } = options;
  mkdirSync(directory, { recursive: true });
  const live = join(directory, 'live');
  writeFiles(live, seed.files);
  const journal = join(directory, 'journal.bin');
  const server = await startServer({
    env: {
      ...baseEnv(join(live, 'keygate.db')),
      Database__SqliteSynchronous: options.mode,
      LD_PRELOAD: options.library,
      POWERCUT_DIR: live,
      POWERCUT_JOURNAL: journal,
    },
    cwd: directory,
  });
  const ledger: Ledger = { registrations: [], failures: [], revocations: [], rotations: [] };
  const stop = { now: false };
  const startNs = process.hrtime.bigint();
  const workers = Array.from({ length: WORKERS }, (_, worker) =>
    work(server, seed, worker, ledger, stop),
  );
  await delay(LOAD_MS.min + random() * (LOAD_MS.max - LOAD_MS.min));
  server.child.kill('SIGKILL');
  stop.now = true;
  await server.exited;
  await Promise.all(workers);
  const killNs = process.hrtime.bigint();

  const records: JournalRecord[] = readJournal(journal);
  const findings: string[] = [];
  const losses = noLosses();
  const record = (cut: string, variant: string, found: Losses): void => {
    if (total(found) > 0) {
      findings.push(`${cut} ${variant}: ${JSON.stringify(found)}`);
    }
    losses.registrations += found.registrations;
    losses.failures += found.failures;
    losses.revocations += found.revocations;
    losses.rotations += found.rotations;
  };
  const rebuild = (name: string, cutNs: bigint, variant: CutVariant): string => {
    const target = join(directory, name);
    writeFiles(target, filesAt(records, live, seed.files, cutNs, variant));
    return target;
  };
  const subset = (): CutVariant => ({ kind: 'subset', keep: random(), random });

  const cuts = Array.from(
    { length: options.virtualCuts },
    () => startNs + BigInt(Math.floor(random() * Number(killNs - startNs))),
  );
  for (const [index, cutNs] of cuts.entries()) {
    record(
      `virtual cut ${index}`,
      'durable',
      lossesOnDisk(rebuild(`v${index}-durable`, cutNs, { kind: 'durable' }), ledger, cutNs),
    );
    if (options.withSubsets) {
      record(
        `virtual cut ${index}`,
        'subset',
        lossesOnDisk(rebuild(`v${index}-subset`, cutNs, subset()), ledger, cutNs),
      );
    }
    rmSync(join(directory, `v${index}-durable`), { recursive: true, force: true });
    rmSync(join(directory, `v${index}-subset`), { recursive: true, force: true });
  }

  // The kill itself: every record the process wrote is in the journal.
  const endNs = killNs;
  record(
    'kill',
    'durable',
    lossesOnDisk(rebuild('kill-durable-disk', endNs, { kind: 'durable' }), ledger, endNs),
  );
  if (options.withSubsets) {
    record('kill', 'subset', lossesOnDisk(rebuild('kill-subset', endNs, subset()), ledger, endNs));
  }
  const restarted = rebuild('kill-durable', endNs, { kind: 'durable' });
  const verifier = await startServer({
    env: baseEnv(join(restarted, 'keygate.db')),
    cwd: directory,
  });
  try {
    record(
      'kill',
      'durable, restarted service',
      await lossesThroughService(verifier, ledger, endNs),
    );
  } finally {
    await verifier.stop('SIGTERM');
  }
  expect(ledger.registrations.filter((sent) => sent.ackNs !== null).length).toBeGreaterThan(5);
  expect(ledger.rotations.filter((sent) => sent.ackNs !== null).length).toBeGreaterThan(5);
  expect(ledger.revocations.filter((sent) => sent.ackNs !== null).length).toBeGreaterThan(5);
  expect(ledger.failures.filter((sent) => sent.ackNs !== null).length).toBeGreaterThan(5);
  return { cuts: cuts.length + 1, findings, losses };
}

describeOnSqlite(
  'power cuts: an acknowledged write survives the power going at any instant',
  () => {
    let directory: string;
    let library: string;
    let seed: Seed;

    beforeAll(async () => {
      directory = mkdtempSync(join(tmpdir(), 'keygate-power-cut-'));
      library = join(directory, 'powercut.so');
      // Built here with the machine's compiler, so the test needs nothing prebuilt.
      execFileSync('cc', ['-shared', '-fPIC', '-O2', '-o', library, SOURCE, '-ldl', '-lpthread']);
      seed = await createSeed(join(directory, 'seed'));
    }, 120_000);

    afterEach(async () => {
      await stopAllServers();
    });

    afterAll(() => {
      rmSync(directory, { recursive: true, force: true });
    });

    it('should lose nothing acknowledged with the default synchronous = FULL, over 52 cuts', async () => {
      const random = mulberry32(16);
      const results: RunResult[] = [];
      for (let run = 0; run < 2; run += 1) {
        results.push(
          await powerCutRun({
            library,
            seed,
            directory: join(directory, `full-${run}`),
            mode: 'full',
            virtualCuts: 25,
            withSubsets: true,
            random,
          }),
        );
      }

      expect(results.reduce((sum, result) => sum + result.cuts, 0)).toBeGreaterThanOrEqual(50);
      expect(results.flatMap((result) => result.findings)).toEqual([]);
    }, 300_000);

    it('should lose acknowledged writes with Database__SqliteSynchronous=normal: the harness sees a loss', async () => {
      const result = await powerCutRun({
        library,
        seed,
        directory: join(directory, 'normal'),
        mode: 'normal',
        virtualCuts: 25,
        withSubsets: false,
        random: mulberry32(17),
      });

      expect(total(result.losses)).toBeGreaterThan(0);
    }, 300_000);
  },
);
