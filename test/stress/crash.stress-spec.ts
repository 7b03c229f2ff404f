import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { TEST_SECRET_KEY } from '../utils/create-test-app.js';
import { LOGIN, REFRESH, REGISTER } from '../utils/routes.js';
import { startServer, stopAllServers, type ServerProcess } from '../utils/spawn-server.js';
import { describeOnSqlite } from '../utils/test-database.js';

const PASSWORD = 'S3cure!pass';
const CYCLES = 5;
const WORKERS = 6;
/** Victims of wrong passwords get fewer than 5 each, so no lockout hides a failure. */
const VICTIMS = 40;
const MAX_FAILURES_PER_VICTIM = 4;

interface Ledger {
  /** Registrations answered 201. */
  readonly registered: Map<string, string>;
  /** Per victim e-mail: wrong passwords answered `Credenciales inválidas.`, and sent. */
  readonly failuresAcknowledged: Map<string, number>;
  readonly failuresSent: Map<string, number>;
  /** Refresh tokens of rotating sessions, latest acknowledged first. */
  readonly chains: string[];
}

async function post(server: ServerProcess, path: string, body: unknown): Promise<Response | null> {
  try {
    return await fetch(`${server.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  } catch {
    // The process was killed under this request: it was never acknowledged.
    return null;
  }
}

/** One worker: registrations, wrong passwords and rotations until `stop` is set. */
async function work(
  server: ServerProcess,
  ledger: Ledger,
  victims: readonly string[],
  stop: { now: boolean },
): Promise<void> {
  let step = 0;
  while (!stop.now) {
    step += 1;
    const kind = step % 3;
    if (kind === 0) {
      const email = `u-${randomUUID()}@example.com`;
      const response = await post(server, REGISTER, {
        username: 'crash',
        email,
        password: PASSWORD,
      });
      if (response?.status === 201) {
        ledger.registered.set(email, PASSWORD);
      }
    } else if (kind === 1) {
      const victim = victims.find(
        (email) => (ledger.failuresSent.get(email) ?? 0) < MAX_FAILURES_PER_VICTIM,
      );
      if (victim === undefined) {
        continue;
      }
      ledger.failuresSent.set(victim, (ledger.failuresSent.get(victim) ?? 0) + 1);
      const response = await post(server, LOGIN, {
        email: victim,
        password: 'Wrong!pass1',
      });
      if (response?.status === 401) {
        const body = (await response.json()) as { message: string };
        expect(body.message).toBe('Credenciales inválidas.');
        ledger.failuresAcknowledged.set(victim, (ledger.failuresAcknowledged.get(victim) ?? 0) + 1);
      }
    } else {
      const index = step % ledger.chains.length;
      const response = await post(server, REFRESH, {
        refreshToken: ledger.chains[index],
      });
      if (response?.status === 200) {
        ledger.chains[index] = ((await response.json()) as { refreshToken: string }).refreshToken;
      }
    }
  }
}

// SQLite's own durability (WAL, synchronous = NORMAL, integrity_check) on files it spawns the
// server on; on PostgreSQL, surviving a crashed client is the server's job.
describeOnSqlite('crashes: kill -9 in the middle of writes loses nothing acknowledged', () => {
  let directory: string;

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'keygate-crash-'));
  });

  afterEach(async () => {
    await stopAllServers();
    rmSync(directory, { recursive: true, force: true });
  });

  it('should keep every acknowledged write over repeated kill -9 cycles', async () => {
    const databasePath = join(directory, 'keygate.db');
    const env = {
      Jwt__SecretKey: TEST_SECRET_KEY,
      PasswordHashing__Iterations: '1000',
      ConnectionStrings__DefaultConnection: databasePath,
    };
    const ledger: Ledger = {
      registered: new Map(),
      failuresAcknowledged: new Map(),
      failuresSent: new Map(),
      chains: [],
    };

    let server = await startServer({ env, cwd: directory });
    const victims: string[] = [];
    for (let i = 0; i < VICTIMS; i += 1) {
      const email = `victim${i}@example.com`;
      const response = await post(server, REGISTER, {
        username: 'victim',
        email,
        password: PASSWORD,
      });
      expect(response?.status).toBe(201);
      victims.push(email);
      if (i < 8) {
        ledger.chains.push(((await response?.json()) as { refreshToken: string }).refreshToken);
      }
    }

    for (let cycle = 0; cycle < CYCLES; cycle += 1) {
      const stop = { now: false };
      const workers = Array.from({ length: WORKERS }, () => work(server, ledger, victims, stop));
      await delay(400 + cycle * 150);
      server.child.kill('SIGKILL');
      stop.now = true;
      await Promise.all(workers);
      await server.exited;
      server = await startServer({ env, cwd: directory });
    }

    // Every acknowledged registration can log in after the restarts.
    expect(ledger.registered.size).toBeGreaterThan(20);
    for (const [email, password] of ledger.registered) {
      const response = await post(server, LOGIN, { email, password });
      expect(response?.status).toBe(200);
    }
    await server.stop('SIGTERM');

    const db = new Database(databasePath, { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      // No session has two tokens of one generation, nor a token past its own generation (so
      // never two active tokens), nor a gap in its chain.
      const doubled = db
        .prepare(
          'SELECT sessionId FROM refresh_tokens GROUP BY sessionId, generation HAVING COUNT(*) > 1',
        )
        .all();
      expect(doubled).toEqual([]);
      const broken = db
        .prepare(
          'SELECT s.id FROM sessions s JOIN refresh_tokens t ON t.sessionId = s.id ' +
            'GROUP BY s.id HAVING MAX(t.generation) <> s.generation ' +
            'OR COUNT(*) <> s.generation - MIN(t.generation) + 1',
        )
        .all();
      expect(broken).toEqual([]);
      // Every acknowledged failure is counted (unacknowledged ones may be counted too).
      const counters = db
        .prepare('SELECT email, failedLoginAttempts AS n FROM users WHERE email LIKE ?')
        .all('victim%') as {
        email: string;
        n: number;
      }[];
      let acknowledged = 0;
      for (const { email, n } of counters) {
        const expected = ledger.failuresAcknowledged.get(email) ?? 0;
        acknowledged += expected;
        expect(n).toBeGreaterThanOrEqual(expected);
        expect(n).toBeLessThanOrEqual(ledger.failuresSent.get(email) ?? 0);
      }
      expect(acknowledged).toBeGreaterThan(10);
    } finally {
      db.close();
    }
  }, 120_000);
});
