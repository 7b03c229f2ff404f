import { jest } from '@jest/globals';
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toSqliteDatetime } from '../src/database/sqlite-datetime.js';
import { TEST_HASH_ITERATIONS, TEST_SECRET_KEY } from './utils/create-test-app.js';
import { httpRequest, type TestResponse } from './utils/http.js';
import { LOGIN, REFRESH, REGISTER } from './utils/routes.js';
import { startServer, stopAllServers, type ServerProcess } from './utils/spawn-server.js';
import { describeOnSqlite } from './utils/test-database.js';
import { CLI_ENTRY, runProcess, type CliRun } from './utils/cli-process.js';

// The README promises that the admin CLI is safe next to running instances. On SQLite that rests
// on every write transaction starting as a writer (BEGIN IMMEDIATE), so that it waits for the
// other process's write lock instead of failing with `database is locked`, and on the purge
// deleting in short batches with pauses between them. This test purges a database of a few
// hundred thousand expired tokens with the built CLI while a real server process serves
// refreshes and logins, and counts the requests that did not succeed.

const EXPIRED_TOKENS = 200_000;
const CLIENTS = 6;
const PASSWORD = 'S3cure!pass';
const DAY_MS = 24 * 60 * 60 * 1000;
const REQUEST_TIMEOUT_MS = 20_000;

// About 30 s on an idle 2-core machine; the bound leaves room for a machine shared with others.
/** The purge may take minutes on a loaded machine; the test's own bound is the limit. */
const PURGE_TIMEOUT_MS = 300_000;
jest.setTimeout(PURGE_TIMEOUT_MS);

interface Account {
  readonly email: string;
  refreshToken: string;
}

describeOnSqlite('tokens:purge next to a running instance (SQLite)', () => {
  let directory: string;
  let path: string;
  let server: ServerProcess;

  const env = (): Record<string, string> => ({
    Jwt__SecretKey: TEST_SECRET_KEY,
    PasswordHashing__Iterations: String(TEST_HASH_ITERATIONS),
    ConnectionStrings__DefaultConnection: path,
    TokenCleanup__Enabled: 'false',
  });

  const post = (route: string, body: unknown): Promise<TestResponse> =>
    httpRequest(server.baseUrl, route, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'keygate-purge-'));
    path = join(directory, 'keygate.db');
  });

  afterEach(async () => {
    await stopAllServers();
    rmSync(directory, { recursive: true, force: true });
  });

  /** Expired tokens of one old user, written straight into the file in one transaction. */
  function seedExpiredTokens(count: number): void {
    const db = new Database(path);
    try {
      db.pragma('busy_timeout = 10000');
      const userId = randomUUID();
      const longAgo = new Date(Date.now() - 60 * DAY_MS);
      const expired = toSqliteDatetime(new Date(Date.now() - 30 * DAY_MS));
      const created = toSqliteDatetime(longAgo);
      db.prepare(
        'INSERT INTO users (id, username, email, "passwordHash", "failedLoginAttempts", ' +
          '"isActive", "createdAt") VALUES (?, ?, ?, ?, 0, 1, ?)',
      ).run(userId, 'old', `old-${userId}@example.com`, 'x', created);
      // Sessions of ten generations each, logged out, that expired long ago (decision 0027).
      const session = db.prepare(
        'INSERT INTO sessions (id, "userId", "startedAt", generation, "lastUsedAt", "lastIp", ' +
          '"expiresAt", "oldestTokenAt", "endedAt", "endedByIp", "endReason") ' +
          "VALUES (?, ?, ?, 9, ?, '10.0.0.1', ?, ?, ?, '10.0.0.1', 'logout')",
      );
      const insert = db.prepare(
        'INSERT INTO refresh_tokens ("tokenHash", "sessionId", generation, "createdAt") ' +
          'VALUES (?, ?, ?, ?)',
      );
      db.transaction(() => {
        let familyId = '';
        for (let i = 0; i < count; i += 1) {
          const id = randomUUID();
          const generation = i % 10;
          if (generation === 0) {
            familyId = id;
            session.run(id, userId, created, created, expired, created, created);
          }
          insert.run(Buffer.from(id.replaceAll('-', ''), 'hex'), familyId, generation, created);
        }
      })();
    } finally {
      db.close();
    }
  }

  function expiredLeft(): number {
    const db = new Database(path, { readonly: true });
    try {
      const row = db
        .prepare(
          'SELECT COUNT(*) AS n FROM refresh_tokens t JOIN sessions s ON s."id" = t."sessionId" ' +
            'WHERE s."expiresAt" < ?',
        )
        .get(toSqliteDatetime(new Date(Date.now() - 7 * DAY_MS))) as { n: number };
      return row.n;
    } finally {
      db.close();
    }
  }

  function runPurge(): Promise<CliRun> {
    return runProcess(CLI_ENTRY, ['tokens:purge'], directory, env(), PURGE_TIMEOUT_MS);
  }

  async function register(): Promise<Account> {
    const email = `live-${randomUUID()}@example.com`;
    const response = await post(REGISTER, { username: 'live', email, password: PASSWORD });
    if (response.status !== 201) {
      throw new Error(`register: ${response.status} ${response.text}`);
    }
    return { email, refreshToken: response.json<{ refreshToken: string }>().refreshToken };
  }

  it('should delete every expired token while no live refresh or login fails', async () => {
    server = await startServer({ env: env(), cwd: directory });
    seedExpiredTokens(EXPIRED_TOKENS);
    const accounts = await Promise.all(Array.from({ length: CLIENTS }, register));

    let purging = true;
    const failures: string[] = [];
    let succeeded = 0;
    const client = async (account: Account): Promise<void> => {
      for (let i = 0; purging; i += 1) {
        // Mostly refreshes (a read, then writes: the transaction that used to fail), now and
        // then a login (writes the user's login state and a new session).
        const response =
          i % 10 === 9
            ? await post(LOGIN, { email: account.email, password: PASSWORD })
            : await post(REFRESH, { refreshToken: account.refreshToken });
        if (response.status !== 200) {
          failures.push(`${response.status} ${response.text}`);
          continue;
        }
        succeeded += 1;
        account.refreshToken = response.json<{ refreshToken: string }>().refreshToken;
      }
    };

    const purge = runPurge().finally(() => {
      purging = false;
    });
    await Promise.all([purge, ...accounts.map(client)]);
    const result = await purge;

    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
      code: 0,
      stdout: `Deleted ${EXPIRED_TOKENS} expired refresh token(s).\n`,
      stderr: '',
    });
    expect({ failed: failures.length, firstFailures: failures.slice(0, 3) }).toEqual({
      failed: 0,
      firstFailures: [],
    });
    expect(succeeded).toBeGreaterThan(CLIENTS);
    expect(expiredLeft()).toBe(0);
    expect(server.stdout()).not.toContain('database is locked');
  });
});
