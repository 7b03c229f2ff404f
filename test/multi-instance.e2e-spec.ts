import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { MIGRATIONS as CORE_MIGRATIONS } from '../src/database/migrations/index.js';
import { hashRefreshToken } from '../src/tokens/storage/refresh-token-value.js';
import { TEST_HASH_ITERATIONS, TEST_SECRET_KEY } from './utils/create-test-app.js';
import { errorBody } from './utils/expected-bodies.js';
import { httpRequest, type TestResponse } from './utils/http.js';
import {
  spawnServer,
  startServer,
  stopAllServers,
  waitUntilListening,
  type ServerProcess,
} from './utils/spawn-server.js';
import {
  createTestDatabase,
  describeOnPostgres,
  type TestDatabase,
} from './utils/test-database.js';
import {
  count,
  EMAIL_TAKEN,
  expectSerialLoginOutcome,
  INVALID_CREDENTIALS,
  isLockoutMessage,
  messages,
  REVOKED,
} from './utils/race-outcomes.js';
import { LOGIN, REFRESH, REGISTER, REVOKE } from './utils/routes.js';

// Two (or four) real server processes on one PostgreSQL schema. Every burst is split between
// the processes, request by request, so the per-process serialisation (AccountLock) cannot be
// what makes the outcome right: only the database-level guarantees (compare-and-set login
// writes, the sessions' compare-and-set, the unique e-mail index, the migration lock, SKIP
// LOCKED) can.

const PASSWORD = 'S3cure!pass';
const WRONG_PASSWORD = 'Wrong!pass1';
/** The names the migrations table records, in its `ORDER BY name` order. */
const MIGRATIONS = CORE_MIGRATIONS.map((migration) => new migration().name ?? '').sort();

/**
 * The advisory lock key that every instance takes around its migrations (src/database/
 * run-migrations.ts). Instances of different versions must agree on it, so it is part of the
 * contract between them, and the test holds it to make instances queue up on it.
 */
const MIGRATION_LOCK_KEY = '7394027311001';

/** No single request of these tests may take longer than this. */
const REQUEST_TIMEOUT_MS = 20_000;

interface TokenRow {
  readonly id: string;
  readonly familyId: string;
  readonly generation: number;
  readonly isRevoked: boolean;
  readonly reasonRevoked: string | null;
  readonly replacedByTokenId: string | null;
  readonly createdByIp: string;
}

interface UserRow {
  readonly failedLoginAttempts: number;
  readonly lockoutEnd: Date | null;
}

interface Session {
  readonly email: string;
  readonly accessToken: string;
  readonly refreshToken: string;
}

/** The environment of one instance: the shared schema, cheap hashing, no cleanup timer. */
function instanceEnv(
  database: TestDatabase,
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  return {
    Jwt__SecretKey: TEST_SECRET_KEY,
    PasswordHashing__Iterations: String(TEST_HASH_ITERATIONS),
    ConnectionStrings__DefaultConnection: database.connectionString,
    TokenCleanup__Enabled: 'false',
    ...extra,
  };
}

/** Starts instances together, each with its own working directory (no `.env` is read). */
async function startInstances(
  count: number,
  database: TestDatabase,
  cwd: string,
  extra: Readonly<Record<string, string>> = {},
): Promise<ServerProcess[]> {
  return Promise.all(
    Array.from({ length: count }, () => startServer({ env: instanceEnv(database, extra), cwd })),
  );
}

function post(
  server: ServerProcess,
  path: string,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): Promise<TestResponse> {
  return httpRequest(server.baseUrl, path, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
}

function bearer(accessToken: string): Record<string, string> {
  return { authorization: `Bearer ${accessToken}` };
}

async function register(server: ServerProcess): Promise<Session> {
  const email = `multi-${randomUUID()}@example.com`;
  const response = await post(server, REGISTER, {
    username: 'multi',
    email,
    password: PASSWORD,
  });
  if (response.status !== 201) {
    throw new Error(`register: expected 201, got ${response.status} ${response.text}`);
  }
  const json = response.json<{ accessToken: string; refreshToken: string }>();
  return { email, accessToken: json.accessToken, refreshToken: json.refreshToken };
}

async function findUser(database: TestDatabase, email: string): Promise<UserRow> {
  const rows = await database.query<UserRow>(
    'SELECT "failedLoginAttempts", "lockoutEnd" FROM users WHERE email = $1',
    [email],
  );
  if (rows.length !== 1) {
    throw new Error(`expected one user ${email}, found ${rows.length}`);
  }
  return rows[0];
}

/**
 * A token as spec §2.2 tells it, from its row and its session's (decision 0027): a rotated token
 * was revoked by its successor's creation; the newest is revoked when its session ended. Named
 * as test/factories/refresh-token.factory.ts names tokens.
 */
const TOKEN_VIEW =
  'SELECT CASE WHEN t.generation = 0 THEN t."sessionId" ' +
  `ELSE t."sessionId" || '#' || t.generation END AS id, t."sessionId" AS "familyId", ` +
  't.generation, (t.generation < s.generation OR s."endedAt" IS NOT NULL) AS "isRevoked", ' +
  `CASE WHEN t.generation < s.generation THEN 'Replaced by new token' ` +
  'ELSE s."endReason" END AS "reasonRevoked", ' +
  `CASE WHEN t.generation < s.generation THEN t."sessionId" || '#' || (t.generation + 1) ` +
  'END AS "replacedByTokenId", s."lastIp" AS "createdByIp" ' +
  'FROM refresh_tokens t JOIN sessions s ON s.id = t."sessionId"';

async function findToken(database: TestDatabase, raw: string): Promise<TokenRow | null> {
  const rows = await database.query<TokenRow>(`${TOKEN_VIEW} WHERE t."tokenHash" = $1`, [
    hashRefreshToken(raw),
  ]);
  return rows[0] ?? null;
}

function findFamily(database: TestDatabase, familyId: string): Promise<TokenRow[]> {
  return database.query<TokenRow>(`${TOKEN_VIEW} WHERE t."sessionId" = $1 ORDER BY t.generation`, [
    familyId,
  ]);
}

async function familyOf(database: TestDatabase, raw: string): Promise<TokenRow[]> {
  const token = await findToken(database, raw);
  if (token === null) {
    throw new Error('token not stored');
  }
  return findFamily(database, token.familyId);
}

/** How much a process had written to each stream at some point. */
interface LogMark {
  readonly stdout: number;
  readonly stderr: number;
}

function logMark(server: ServerProcess): LogMark {
  return { stdout: server.stdout().length, stderr: server.stderr().length };
}

/** Every line logged at error level or above, from any of the processes (after `since`). */
function errorLines(servers: readonly ServerProcess[], since: readonly LogMark[] = []): string[] {
  return servers
    .flatMap((server, i) => [
      ...server
        .stdout()
        .slice(since[i]?.stdout ?? 0)
        .split('\n'),
      ...server
        .stderr()
        .slice(since[i]?.stderr ?? 0)
        .split('\n'),
    ])
    .filter((line) => /"level":"(error|fatal)"/.test(line));
}

describeOnPostgres('several instances on one PostgreSQL schema', () => {
  let cwd: string;

  beforeAll(() => {
    cwd = mkdtempSync(join(tmpdir(), 'keygate-multi-'));
  });

  afterAll(async () => {
    await stopAllServers();
    rmSync(cwd, { recursive: true, force: true });
  });

  describe('migrations', () => {
    const databases: TestDatabase[] = [];

    afterEach(async () => {
      await stopAllServers();
      await Promise.all(databases.splice(0).map((database) => database.drop()));
    });

    it('should bring up 4 instances started together on an empty schema and apply each migration once', async () => {
      for (let round = 0; round < 3; round += 1) {
        const database = await createTestDatabase();
        databases.push(database);
        const servers = await startInstances(4, database, cwd);

        const applied = await database.query<{ name: string; copies: number }>(
          'SELECT name, COUNT(*)::int AS copies FROM migrations GROUP BY name ORDER BY name',
        );
        expect(applied).toEqual(MIGRATIONS.map((name) => ({ name, copies: 1 })));
        const sessions = await Promise.all(servers.map((server) => register(server)));
        expect(sessions).toHaveLength(4);
        expect(errorLines(servers)).toEqual([]);
        await stopAllServers();
      }
    }, 90_000);

    it('should hold 4 starting instances at the migration lock and let them migrate once when it is released', async () => {
      const database = await createTestDatabase();
      databases.push(database);
      const holder = new pg.Client({ connectionString: database.connectionString });
      await holder.connect();
      let servers: ServerProcess[] = [];
      try {
        await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
        // Advisory locks are per database, and the other Jest worker's schemas share this one:
        // its instances queue on the same lock. These four are told apart by their name.
        const marked = new URL(database.connectionString);
        const name = `migration-wait-${randomUUID()}`;
        marked.searchParams.set('application_name', name);
        servers = await Promise.all(
          Array.from({ length: 4 }, () =>
            // A request-sized statement timeout must not cut short the wait for the lock.
            spawnServer({
              env: instanceEnv(
                { ...database, connectionString: marked.toString() },
                { Database__StatementTimeoutMs: '1000' },
              ),
              cwd,
            }),
          ),
        );
        // Wait until all four queue on the lock, whatever their start-up speed.
        const deadline = Date.now() + 30_000;
        let waiting = 0;
        while (waiting < 4 && Date.now() < deadline) {
          await delay(100);
          const [row] = await database.query<{ waiting: number }>(
            `SELECT COUNT(*)::int AS waiting FROM pg_locks JOIN pg_stat_activity USING (pid)
             WHERE locktype = 'advisory' AND NOT granted AND application_name = $1`,
            [name],
          );
          waiting = row.waiting;
        }
        expect(waiting).toBe(4);
        // Hold the lock well past the statement timeout.
        await delay(2_500);
        // Meanwhile none has migrated, none listens, none gave up.
        const [{ migrated }] = await database.query<{ migrated: string | null }>(
          "SELECT to_regclass('migrations')::text AS migrated",
        );
        expect(migrated).toBeNull();
        expect(servers.map((server) => server.stdout())).not.toContainEqual(
          expect.stringContaining('successfully started'),
        );
        expect(servers.map((server) => server.child.exitCode)).toEqual([null, null, null, null]);
        expect(errorLines(servers)).toEqual([]);
      } finally {
        await holder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
        await holder.end();
      }
      // Released together, they take turns: one migrates, the others find nothing pending.
      await Promise.all(servers.map((server) => waitUntilListening(server)));
      const applied = await database.query<{ name: string; copies: number }>(
        'SELECT name, COUNT(*)::int AS copies FROM migrations GROUP BY name ORDER BY name',
      );
      expect(applied).toEqual(MIGRATIONS.map((name) => ({ name, copies: 1 })));
      await Promise.all(servers.map((server) => register(server)));
      expect(errorLines(servers)).toEqual([]);
    }, 60_000);
  });

  describe('two instances sharing the work', () => {
    let database: TestDatabase;
    let servers: ServerProcess[];

    /** The instance for the i-th request of a burst: they alternate. */
    const via = (i: number): ServerProcess => servers[i % servers.length];

    beforeAll(async () => {
      database = await createTestDatabase();
      servers = await startInstances(2, database, cwd);
    }, 30_000);

    afterAll(async () => {
      await stopAllServers();
      await database.drop();
    });

    let logMarks: LogMark[] = [];

    beforeEach(() => {
      logMarks = servers.map(logMark);
    });

    afterEach(() => {
      // A lost race must be answered as a domain outcome, never as an unhandled failure.
      expect(errorLines(servers, logMarks)).toEqual([]);
    });

    const login = (i: number, email: string, password: string): Promise<TestResponse> =>
      post(via(i), LOGIN, { email, password });

    describe('lockout', () => {
      it.each([10, 50, 200])(
        'should answer %i parallel wrong passwords with exactly 5 invalid-credential answers',
        async (n) => {
          const { email } = await register(via(0));
          const responses = await Promise.all(
            Array.from({ length: n }, (_, i) => login(i, email, WRONG_PASSWORD)),
          );
          const texts = messages(responses);
          expect(responses.map((response) => response.status)).toEqual(Array(n).fill(401));
          expect(count(texts, INVALID_CREDENTIALS)).toBe(5);
          expect(texts.filter(isLockoutMessage)).toHaveLength(n - 5);
          for (const response of responses) {
            expect(response.json()).toEqual(
              errorBody(401, response.json<{ message: string }>().message),
            );
          }
          const stored = await findUser(database, email);
          expect(stored.failedLoginAttempts).toBe(5);
          expect(stored.lockoutEnd).not.toBeNull();
        },
        60_000,
      );

      it('should let 20 parallel correct logins all succeed with distinct refresh tokens', async () => {
        const { email } = await register(via(1));
        const responses = await Promise.all(
          Array.from({ length: 20 }, (_, i) => login(i, email, PASSWORD)),
        );
        expect(responses.map((response) => response.status)).toEqual(Array(20).fill(200));
        const tokens = responses.map(
          (response) => response.json<{ refreshToken: string }>().refreshToken,
        );
        expect(new Set(tokens).size).toBe(20);
        for (const token of tokens) {
          expect(await findToken(database, token)).toMatchObject({ isRevoked: false });
        }
        expect(await findUser(database, email)).toEqual({
          failedLoginAttempts: 0,
          lockoutEnd: null,
        });
      }, 30_000);

      it('should give 49 wrong and 1 correct password an outcome of some serial order', async () => {
        for (const correctIndex of [0, 17, 49]) {
          const { email } = await register(via(correctIndex));
          const responses = await Promise.all(
            Array.from({ length: 50 }, (_, i) =>
              login(i, email, i === correctIndex ? PASSWORD : WRONG_PASSWORD),
            ),
          );
          expectSerialLoginOutcome(responses, correctIndex);
          expect((await findUser(database, email)).failedLoginAttempts).toBe(5);
        }
      }, 60_000);
    });

    describe('rotation', () => {
      it.each([2, 10, 50])(
        'should let exactly one of %i parallel refreshes of one token succeed',
        async (k) => {
          const { refreshToken } = await register(via(0));
          const responses = await Promise.all(
            Array.from({ length: k }, (_, i) => post(via(i), REFRESH, { refreshToken })),
          );
          const winners = responses.filter((response) => response.status === 200);
          expect(winners).toHaveLength(1);
          expect(responses.filter((response) => response.status === 401)).toHaveLength(k - 1);
          expect(count(messages(responses), REVOKED)).toBe(k - 1);

          const family = await familyOf(database, refreshToken);
          // One replacement row, never two; and reuse detection revoked the winner's new token.
          expect(family).toHaveLength(2);
          expect(family[0]).toMatchObject({
            isRevoked: true,
            reasonRevoked: 'Replaced by new token',
            replacedByTokenId: family[1].id,
          });
          expect(family[1]).toMatchObject({
            isRevoked: true,
            reasonRevoked: 'Token reuse detectado',
          });
          const next = winners[0].json<{ refreshToken: string }>().refreshToken;
          expect(await findToken(database, next)).toMatchObject({ id: family[1].id });
          for (const server of servers) {
            const retry = await post(server, REFRESH, { refreshToken: next });
            expect(retry.json()).toEqual(errorBody(401, REVOKED));
          }
        },
        60_000,
      );

      it('should never let a refresh and a revoke of one token both take it from active', async () => {
        for (let round = 0; round < 20; round += 1) {
          const user = await register(via(round));
          const [refresh, revoke] = await Promise.all([
            post(via(round), REFRESH, { refreshToken: user.refreshToken }),
            post(
              via(round + 1),
              REVOKE,
              { refreshToken: user.refreshToken, reason: 'logout' },
              bearer(user.accessToken),
            ),
          ]);
          expect(revoke.json()).toEqual({ message: 'Token revocado exitosamente.' });
          const token = await findToken(database, user.refreshToken);
          const family = await familyOf(database, user.refreshToken);
          if (refresh.status === 200) {
            // Serial order: refresh, then revoke of the rotated token, which ends the session.
            expect(token).toMatchObject({ reasonRevoked: 'Replaced by new token' });
            expect(family).toHaveLength(2);
          } else {
            // Serial order: revoke, then the refresh presents a revoked token.
            expect(refresh.json()).toEqual(errorBody(401, REVOKED));
            expect(token).toMatchObject({ reasonRevoked: 'logout', replacedByTokenId: null });
            expect(family).toHaveLength(1);
          }
          expect(family.filter((member) => !member.isRevoked)).toHaveLength(0);
        }
      }, 60_000);

      it('should leave no active token when an old token is replayed on one instance while the chain rotates on the other', async () => {
        // The replay is sent after `replayAfter` acknowledged rotations, together with the next
        // one, so it lands in the middle of a rotation on the other process.
        for (const replayAfter of [1, 2, 3, 5, 8, 13]) {
          const first = await register(via(0));
          let current = first.refreshToken;
          let rotated = 0;
          let broken: TestResponse | null = null;
          let replay: Promise<TestResponse> | null = null;
          for (let i = 0; i < 30 && broken === null; i += 1) {
            if (rotated === replayAfter && replay === null) {
              replay = post(servers[1], REFRESH, { refreshToken: first.refreshToken });
            }
            const response = await post(servers[0], REFRESH, { refreshToken: current });
            if (response.status === 200) {
              current = response.json<{ refreshToken: string }>().refreshToken;
              rotated += 1;
            } else {
              broken = response;
            }
          }
          // The first token had been rotated out before the replay: it reads as reuse.
          expect((await replay)?.json()).toEqual(errorBody(401, REVOKED));
          // Reuse detection ends the chain: whichever rotation comes next fails.
          expect(broken?.json()).toEqual(errorBody(401, REVOKED));
          const family = await familyOf(database, first.refreshToken);
          expect(family).toHaveLength(rotated + 1);
          expect(family.filter((token) => !token.isRevoked)).toHaveLength(0);
        }
      }, 60_000);
    });

    describe('registration', () => {
      it('should accept exactly one of 20 registrations of one e-mail and 20 of its case variants', async () => {
        const letters = [...randomBytes(8)].map((byte) => String.fromCharCode(97 + (byte % 26)));
        const email = `race${letters.join('')}@example.com`;
        const letterPositions = [...email].flatMap((char, position) =>
          /[a-z]/.test(char) ? [position] : [],
        );
        // Even indexes send the e-mail as is; odd ones each upper-case a different letter of it.
        const variants = Array.from({ length: 40 }, (_, i) => {
          if (i % 2 === 0) {
            return email;
          }
          const position = letterPositions[(i - 1) / 2];
          return (
            email.slice(0, position) + email[position].toUpperCase() + email.slice(position + 1)
          );
        });
        expect(new Set(variants.filter((_, i) => i % 2 === 1)).size).toBe(20);
        const responses = await Promise.all(
          variants.map((address, i) =>
            post(via(i), REGISTER, {
              username: `racer${i}`,
              email: address,
              password: PASSWORD,
            }),
          ),
        );
        const statuses = responses.map((response) => response.status);
        expect(count(statuses, 201)).toBe(1);
        expect(count(statuses, 409)).toBe(39);
        for (const response of responses.filter((candidate) => candidate.status === 409)) {
          expect(response.json()).toEqual(errorBody(409, EMAIL_TAKEN));
        }
        const rows = await database.query<{ copies: number }>(
          'SELECT COUNT(*)::int AS copies FROM users WHERE lower(email) = $1',
          [email],
        );
        expect(rows).toEqual([{ copies: 1 }]);
      }, 30_000);
    });
  });

  describe('expired-token cleanup', () => {
    const EXPIRED = 3_000;
    const ACTIVE = 200;
    let database: TestDatabase;

    beforeAll(async () => {
      database = await createTestDatabase();
    });

    afterAll(async () => {
      await stopAllServers();
      await database.drop();
    });

    it('should delete every expired token exactly once with two instances and keep the active ones', async () => {
      // One instance migrates the schema and registers a user to own the tokens.
      const [migrator] = await startInstances(1, database, cwd);
      const owner = await register(migrator);
      await migrator.stop();
      const [{ id: userId }] = await database.query<{ id: string }>(
        'SELECT id FROM users WHERE email = $1',
        [owner.email],
      );
      // Sessions of one token each (a third of them logged out), created a lifetime before
      // their expiry.
      const insert = (rows: number, expiresAt: string, tag: string): Promise<unknown> =>
        database.query(
          `WITH started AS (
             INSERT INTO sessions (id, "userId", "startedAt", generation, "lastUsedAt", "lastIp",
               "expiresAt", "oldestTokenAt", "endedAt", "endedByIp", "endReason")
             SELECT gen_random_uuid()::text, $1, e - interval '7 days', 0, e - interval '7 days',
               '127.0.0.1', e, e - interval '7 days',
               CASE WHEN i % 3 = 0 THEN e - interval '7 days' END,
               CASE WHEN i % 3 = 0 THEN '127.0.0.1' END, CASE WHEN i % 3 = 0 THEN 'logout' END
             FROM generate_series(1, $2::int) AS i, LATERAL (SELECT ${expiresAt} AS e) AS x
             RETURNING id, "startedAt")
           INSERT INTO refresh_tokens ("tokenHash", "sessionId", generation, "createdAt")
           SELECT decode(md5($3::text || id) || md5(random()::text), 'hex'), id, 0, "startedAt"
           FROM started`,
          [userId, rows, tag],
        );
      await insert(EXPIRED, `now() - interval '1 second' * i`, 'expired');
      await insert(ACTIVE, `now() + interval '1 day'`, 'active');
      const countTokens = async (condition: string): Promise<number> => {
        const [row] = await database.query<{ total: number }>(
          'SELECT COUNT(*)::int AS total FROM refresh_tokens t JOIN sessions s ' +
            `ON s.id = t."sessionId" WHERE ${condition}`,
        );
        return row.total;
      };
      expect(await countTokens('s."expiresAt" < now()')).toBe(EXPIRED);

      const servers = await startInstances(2, database, cwd, {
        TokenCleanup__Enabled: 'true',
        TokenCleanup__IntervalSeconds: '1',
        TokenCleanup__RetentionDays: '0',
        TokenCleanup__BatchSize: '50',
      });
      const startedAt = Date.now();
      let remaining = EXPIRED;
      while (remaining > 0 && Date.now() - startedAt < 10_000) {
        await delay(250);
        remaining = await countTokens('s."expiresAt" < now()');
      }
      expect(remaining).toBe(0);
      // One more tick on each instance finds nothing left and fails nowhere.
      await delay(1_500);
      expect(await countTokens('s."expiresAt" >= now()')).toBe(ACTIVE + 1);
      expect(await findToken(database, owner.refreshToken)).toMatchObject({ isRevoked: false });
      expect(errorLines(servers)).toEqual([]);
      // What the instances report deleting adds up to what was there: no row counted twice.
      const deleted = servers
        .flatMap((server) => [...server.stdout().matchAll(/Deleted (\d+) expired refresh token/g)])
        .reduce((sum, match) => sum + Number(match[1]), 0);
      expect(deleted).toBe(EXPIRED);
    }, 60_000);
  });

  describe('TrustedProxies', () => {
    let database: TestDatabase;
    let behindProxy: ServerProcess;
    let direct: ServerProcess;

    beforeAll(async () => {
      database = await createTestDatabase();
      [behindProxy] = await startInstances(1, database, cwd, { TrustedProxies: '127.0.0.1' });
      [direct] = await startInstances(1, database, cwd);
    }, 30_000);

    afterAll(async () => {
      await stopAllServers();
      await database.drop();
    });

    const loginWithHeader = async (
      server: ServerProcess,
      email: string,
      forwardedFor: string,
    ): Promise<string> => {
      const response = await post(
        server,
        LOGIN,
        { email, password: PASSWORD },
        { 'x-forwarded-for': forwardedFor },
      );
      expect(response.status).toBe(200);
      return response.json<{ refreshToken: string }>().refreshToken;
    };

    it('should record the forwarded client address only on the instance that trusts the proxy', async () => {
      const { email } = await register(direct);

      const trusted = await loginWithHeader(behindProxy, email, '203.0.113.7');
      expect(await findToken(database, trusted)).toMatchObject({ createdByIp: '203.0.113.7' });

      const chained = await loginWithHeader(behindProxy, email, '198.51.100.9, 203.0.113.7');
      // Read right to left: 203.0.113.7 is not a trusted proxy, so it is the client.
      expect(await findToken(database, chained)).toMatchObject({ createdByIp: '203.0.113.7' });

      const ignored = await loginWithHeader(direct, email, '203.0.113.7');
      expect(await findToken(database, ignored)).toMatchObject({ createdByIp: '127.0.0.1' });
    }, 30_000);
  });
});
