import type pg from 'pg';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_PASSWORD, registerUser } from './factories/user.factory.js';
import {
  createTestApp,
  TEST_HASH_ITERATIONS,
  TEST_SECRET_KEY,
  useSharedTestApp,
} from './utils/create-test-app.js';
import { errorBody, publicUser } from './utils/expected-bodies.js';
import { httpRequest, type TestResponse } from './utils/http.js';
import { LOGIN, ME, REFRESH, REGISTER } from './utils/routes.js';
import { startServer, stopAllServers } from './utils/spawn-server.js';
import {
  createTestDatabase,
  describeOnPostgres,
  type TestDatabase,
} from './utils/test-database.js';

const MINUTE_MS = 60 * 1000;
const WRONG_PASSWORD = 'Wrong!pass1';
const INVALID_CREDENTIALS = 'Credenciales inválidas.';
/** Far from UTC, and not on a whole hour, so a lost or doubled offset cannot go unnoticed. */
const SESSION_TIME_ZONE = 'America/St_Johns';
const PROCESS_TIME_ZONE = 'Asia/Kathmandu';

interface ColumnRow {
  readonly table_name: string;
  readonly column_name: string;
  readonly data_type: string;
}

interface IndexRow {
  readonly table: string;
  readonly index: string;
  readonly unique: boolean;
  readonly columns: string;
}

/** The same database, with every session of the service set to another time zone. */
function inSessionTimeZone(database: TestDatabase, timeZone: string): TestDatabase {
  const url = new URL(database.connectionString);
  url.searchParams.set(
    'options',
    `${url.searchParams.get('options') ?? ''} -c TimeZone=${timeZone}`,
  );
  return { ...database, connectionString: url.toString() };
}

/** Milliseconds since the epoch of a stored instant, computed by the server, not by a driver. */
async function storedEpochMs(database: TestDatabase, sql: string, id: string): Promise<number> {
  const rows = await database.query<{ ms: string }>(sql, [id]);
  expect(rows).toHaveLength(1);
  return Number(rows[0].ms);
}

describeOnPostgres('PostgreSQL', () => {
  describe('schema created by the migrations', () => {
    const t = useSharedTestApp();

    it('should store every instant as timestamp with time zone', async () => {
      const rows = await t.database.query<ColumnRow>(
        `SELECT table_name, column_name, data_type FROM information_schema.columns
          WHERE table_schema = current_schema() AND data_type LIKE 'timestamp%'
          ORDER BY table_name, column_name`,
      );

      expect(rows).toEqual(
        [
          ['account_tokens', 'createdAt'],
          ['account_tokens', 'expiresAt'],
          ['admin_keys', 'createdAt'],
          ['admin_keys', 'revokedAt'],
          ['email_codes', 'createdAt'],
          ['email_codes', 'expiresAt'],
          ['federated_identities', 'lastUsedAt'],
          ['federated_identities', 'linkedAt'],
          ['federation_codes', 'createdAt'],
          ['federation_codes', 'expiresAt'],
          ['federation_flows', 'createdAt'],
          ['federation_flows', 'expiresAt'],
          ['mail_outbox', 'claimedUntil'],
          ['mail_outbox', 'createdAt'],
          ['mail_outbox', 'finishedAt'],
          ['mail_outbox', 'nextAttemptAt'],
          ['oauth_artefacts', 'consumedAt'],
          ['oauth_artefacts', 'expiresAt'],
          ['oauth_clients', 'createdAt'],
          ['oauth_consents', 'grantedAt'],
          ['passkey_challenges', 'expiresAt'],
          ['passkeys', 'createdAt'],
          ['passkeys', 'lastUsedAt'],
          ['recovery_codes', 'createdAt'],
          ['refresh_tokens', 'createdAt'],
          ['sessions', 'endedAt'],
          ['sessions', 'expiresAt'],
          ['sessions', 'lastUsedAt'],
          ['sessions', 'oldestTokenAt'],
          ['sessions', 'startedAt'],
          ['signing_keys', 'activatesAt'],
          ['signing_keys', 'createdAt'],
          ['signing_keys', 'retiredAt'],
          ['totp_factors', 'confirmedAt'],
          ['totp_factors', 'createdAt'],
          ['users', 'createdAt'],
          ['users', 'emailVerifiedAt'],
          ['users', 'lastLoginAt'],
          ['users', 'lockoutEnd'],
          ['webhook_deliveries', 'claimedUntil'],
          ['webhook_deliveries', 'finishedAt'],
          ['webhook_deliveries', 'nextAttemptAt'],
          ['webhook_deliveries', 'occurredAt'],
          ['webhook_queue', 'occurredAt'],
          ['webhook_subscriptions', 'createdAt'],
        ].map(([table_name, column_name]) => ({
          table_name,
          column_name,
          data_type: 'timestamp with time zone',
        })),
      );
    });

    it('should have the unique index on users.email and the sessions and refresh_tokens indexes', async () => {
      const rows = await t.database.query<IndexRow>(
        `SELECT t.relname AS "table", i.relname AS "index", x.indisunique AS "unique",
                string_agg(a.attname, ',' ORDER BY k.position) AS "columns"
           FROM pg_index x
           JOIN pg_class i ON i.oid = x.indexrelid
           JOIN pg_class t ON t.oid = x.indrelid
           JOIN pg_namespace n ON n.oid = t.relnamespace
          CROSS JOIN LATERAL unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, position)
           JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
          WHERE n.nspname = current_schema() AND NOT x.indisprimary
          GROUP BY t.relname, i.relname, x.indisunique
          ORDER BY 1, 2`,
      );

      expect(rows).toEqual(
        expect.arrayContaining([
          { table: 'users', index: 'UQ_users_email', unique: true, columns: 'email' },
          {
            table: 'refresh_tokens',
            index: 'IDX_refresh_tokens_sessionId',
            unique: false,
            columns: 'sessionId',
          },
          { table: 'sessions', index: 'IDX_sessions_userId', unique: false, columns: 'userId' },
          {
            table: 'auth_events',
            index: 'IDX_auth_events_userId',
            unique: false,
            columns: 'userId',
          },
          {
            table: 'sessions',
            index: 'IDX_sessions_oldestTokenAt',
            unique: false,
            columns: 'oldestTokenAt',
          },
        ]),
      );
      // The digest is the key itself (decision 0027): no second index on it.
      expect(rows.filter((row) => row.table === 'refresh_tokens')).toHaveLength(1);
    });

    it("should delete a user's sessions and their refresh tokens with the user (foreign keys, ON DELETE CASCADE)", async () => {
      const rows = await t.database.query(
        `SELECT c.conrelid::regclass::text AS "table", c.conname AS name,
                c.confrelid::regclass::text AS "references", c.confdeltype AS "onDelete"
           FROM pg_constraint c
          WHERE c.conrelid IN ('refresh_tokens'::regclass, 'sessions'::regclass) AND c.contype = 'f'
          ORDER BY 1`,
      );

      expect(rows).toEqual([
        {
          table: 'refresh_tokens',
          name: 'FK_refresh_tokens_sessionId',
          references: 'sessions',
          onDelete: 'c',
        },
        { table: 'sessions', name: 'FK_sessions_userId', references: 'users', onDelete: 'c' },
      ]);
    });
  });

  describe('Database__PoolSize', () => {
    const t = useSharedTestApp({ environment: { Database__PoolSize: '2' } });

    it('should answer many parallel requests on a pool of 2 connections, never opening a third', async () => {
      const pool = (t.dataSource.driver as unknown as { master: pg.Pool }).master;
      let mostConnections = pool.totalCount;
      let mostWaiting = 0;
      const observe = (): void => {
        mostConnections = Math.max(mostConnections, pool.totalCount);
        mostWaiting = Math.max(mostWaiting, pool.waitingCount);
      };
      pool.on('acquire', observe);
      try {
        const users = await Promise.all(Array.from({ length: 5 }, () => registerUser(t)));

        const [me, refreshed, logins] = await Promise.all([
          Promise.all(Array.from({ length: 20 }, (_, i) => t.get(ME, users[i % 5].accessToken))),
          Promise.all(users.map((user) => t.post(REFRESH, { refreshToken: user.refreshToken }))),
          Promise.all(
            users.map((user) => t.post(LOGIN, { email: user.email, password: DEFAULT_PASSWORD })),
          ),
        ]);

        expect(me.map((response) => response.status)).toEqual(Array(20).fill(200));
        expect(me.map((response) => response.json())).toEqual(
          Array.from({ length: 20 }, (_, i) => publicUser(users[i % 5])),
        );
        expect(refreshed.map((response) => response.status)).toEqual(Array(5).fill(200));
        expect(logins.map((response) => response.status)).toEqual(Array(5).fill(200));
      } finally {
        pool.off('acquire', observe);
      }
      expect(pool.options.max).toBe(2);
      expect(mostConnections).toBe(2);
      // The requests did want more connections than the pool has: some queued for one.
      expect(mostWaiting).toBeGreaterThan(0);
    });
  });

  describe('time zones other than UTC', () => {
    let database: TestDatabase;

    beforeEach(async () => {
      database = inSessionTimeZone(await createTestDatabase(), SESSION_TIME_ZONE);
    });

    afterEach(async () => {
      await stopAllServers();
      await database.drop();
    });

    it('should keep instants exact when the database session is not in UTC', async () => {
      const t = await createTestApp({ database });
      try {
        const sessionZone = await t.dataSource.query<Array<{ TimeZone: string }>>('SHOW TimeZone');
        expect(sessionZone).toEqual([{ TimeZone: SESSION_TIME_ZONE }]);
        const registeredAt = t.clock.now();
        const user = await registerUser(t);

        const me = await t.get(ME, user.accessToken);

        expect(me.json()).toEqual({ ...publicUser(user), createdAt: registeredAt.toISOString() });
        const createdAt = await storedEpochMs(
          database,
          'SELECT extract(epoch FROM "createdAt") * 1000 AS ms FROM users WHERE id = $1',
          user.id,
        );
        expect(createdAt).toBe(registeredAt.getTime());

        // Spec §3.1: locked out for exactly 15 minutes from the fifth failure.
        for (let attempt = 0; attempt < 5; attempt += 1) {
          const failed = await t.post(LOGIN, { email: user.email, password: WRONG_PASSWORD });
          expect(failed.json()).toEqual(errorBody(401, INVALID_CREDENTIALS));
        }
        const lockedAt = t.clock.now();
        const lockoutEnd = await storedEpochMs(
          database,
          'SELECT extract(epoch FROM "lockoutEnd") * 1000 AS ms FROM users WHERE id = $1',
          user.id,
        );
        expect(lockoutEnd).toBe(lockedAt.getTime() + 15 * MINUTE_MS);
        t.clock.advance(15 * MINUTE_MS - 1);
        const locked = await t.post(LOGIN, { email: user.email, password: DEFAULT_PASSWORD });
        expect(locked.json()).toEqual(
          errorBody(401, 'Cuenta bloqueada temporalmente. Intenta en 1 minuto(s).'),
        );
        t.clock.advance(2);
        const unlocked = await t.post(LOGIN, { email: user.email, password: DEFAULT_PASSWORD });
        expect(unlocked.status).toBe(200);
      } finally {
        await t.close();
      }
    });

    it("should store a rotation's instants exactly when the database session is not in UTC", async () => {
      const t = await createTestApp({ database });
      try {
        const user = await registerUser(t);
        t.clock.advance(MINUTE_MS);
        const rotatedAt = t.clock.now();

        const refreshed = await t.post(REFRESH, { refreshToken: user.refreshToken });

        expect(refreshed.status).toBe(200);
        const successorCreatedAt = await storedEpochMs(
          database,
          'SELECT extract(epoch FROM t."createdAt") * 1000 AS ms FROM refresh_tokens t ' +
            'JOIN sessions s ON s.id = t."sessionId" WHERE s."userId" = $1 AND t.generation = 1',
          user.id,
        );
        expect(successorCreatedAt).toBe(rotatedAt.getTime());
        const lastUsedAt = await storedEpochMs(
          database,
          'SELECT extract(epoch FROM "lastUsedAt") * 1000 AS ms FROM sessions WHERE "userId" = $1',
          user.id,
        );
        expect(lastUsedAt).toBe(rotatedAt.getTime());
      } finally {
        await t.close();
      }
    });

    it('should keep instants exact when neither the process nor the session is in UTC', async () => {
      const cwd = mkdtempSync(join(tmpdir(), 'keygate-pg-tz-'));
      try {
        const server = await startServer({
          cwd,
          env: {
            NODE_ENV: 'production',
            TZ: PROCESS_TIME_ZONE,
            Jwt__SecretKey: TEST_SECRET_KEY,
            PasswordHashing__Iterations: String(TEST_HASH_ITERATIONS),
            ConnectionStrings__DefaultConnection: database.connectionString,
          },
        });
        const post = (path: string, body: unknown): Promise<TestResponse> =>
          httpRequest(server.baseUrl, path, {
            method: 'POST',
            body: JSON.stringify(body),
            headers: { 'content-type': 'application/json' },
          });
        const credentials = { email: 'zoned@example.com', password: DEFAULT_PASSWORD };
        const registered = await post(REGISTER, { username: 'zoned', ...credentials });
        expect(registered.status).toBe(201);
        const { user } = registered.json<{ user: { id: string; createdAt: string } }>();

        const createdAt = await storedEpochMs(
          database,
          'SELECT extract(epoch FROM "createdAt") * 1000 AS ms FROM users WHERE id = $1',
          user.id,
        );
        expect(createdAt).toBe(Date.parse(user.createdAt));

        for (let attempt = 0; attempt < 5; attempt += 1) {
          const failed = await post(LOGIN, { ...credentials, password: WRONG_PASSWORD });
          expect(failed.json()).toEqual(errorBody(401, INVALID_CREDENTIALS));
        }
        const locked = await post(LOGIN, credentials);
        expect(locked.json()).toEqual(
          errorBody(401, 'Cuenta bloqueada temporalmente. Intenta en 15 minuto(s).'),
        );
      } finally {
        await stopAllServers();
        rmSync(cwd, { recursive: true, force: true });
      }
    });
  });
});
