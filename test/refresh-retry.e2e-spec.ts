import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { startRoundTripCounter, type RoundTripCounter } from '../bench/lib/round-trips.mjs';
import { User } from '../src/users/entities/user.entity.js';
import { findFamily, findRefreshToken, findSession } from './factories/refresh-token.factory.js';
import { registerUser, type RegisteredUser } from './factories/user.factory.js';
import { auditRows } from './utils/audit-rows.js';
import {
  createTestApp,
  TEST_HASH_ITERATIONS,
  TEST_SECRET_KEY,
  type TestApp,
  type TestResponse,
  useTestApp,
} from './utils/create-test-app.js';
import { authResponse, errorBody } from './utils/expected-bodies.js';
import { FakeClock } from './utils/fake-clock.js';
import { httpRequest } from './utils/http.js';
import { decodeJwt } from './utils/jwt.js';
import { ME, REFRESH, REGISTER, REVOKE, REVOKE_ALL_SESSIONS } from './utils/routes.js';
import { startServer, stopAllServers, type ServerProcess } from './utils/spawn-server.js';
import {
  createTestDatabase,
  describeOnPostgres,
  type TestDatabase,
} from './utils/test-database.js';

/**
 * Issue 26, Jwt__RefreshRetryWindowSeconds: the immediate predecessor of a session's newest
 * refresh token, presented again within the window of the rotation that revoked it, answers the
 * same pair again (a retry after a lost answer); anything else is the interface's reuse
 * detection, as with the window at 0.
 */

const WINDOW_SECONDS = 30;
const WINDOW_MS = WINDOW_SECONDS * 1000;
const RETRY = { Jwt__RefreshRetryWindowSeconds: String(WINDOW_SECONDS) };
const REVOKED = 'Refresh token revocado.';

interface AuthBody {
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly accessTokenExpiry: string;
  readonly user: { readonly id: string };
}

const bodyOf = (response: TestResponse): AuthBody => response.json<AuthBody>();

/** Refreshes `refreshToken`, which must succeed; its whole answer. */
async function rotate(t: TestApp, refreshToken: string): Promise<AuthBody> {
  const response = await t.post(REFRESH, { refreshToken });
  expect(response.status).toBe(200);
  return bodyOf(response);
}

/** The audit trail of `userId` as type and details, oldest first. */
async function trailOf(
  t: TestApp,
  userId: string,
): Promise<{ type: string; details: Record<string, unknown> }[]> {
  return (await auditRows(t.database, userId)).map(({ type, details }) => ({ type, details }));
}

describe('Jwt__RefreshRetryWindowSeconds: a lost answer retried', () => {
  describe('within the window', () => {
    const t = useTestApp({ environment: RETRY });

    it('should answer the predecessor presented again with the identical pair, and store nothing', async () => {
      const user = await registerUser(t);
      const first = await rotate(t, user.refreshToken);
      const familyId = (await findRefreshToken(t, user.refreshToken))?.familyId ?? '';
      const sessionBefore = await findSession(t, familyId);
      t.clock.advance(WINDOW_MS - 1);

      const retry = await t.post(REFRESH, { refreshToken: user.refreshToken });

      expect(first).toEqual(authResponse(user));
      expect(retry.status).toBe(200);
      // The same pair, the access token byte for byte: its instant and id are the rotation's.
      expect(retry.json()).toEqual(first);
      // No second rotation, no fork: generation 0 rotated, generation 1 the newest, unchanged.
      expect((await findFamily(t, familyId)).map((token) => token.generation)).toEqual([0, 1]);
      expect(await findSession(t, familyId)).toEqual(sessionBefore);
      expect((await t.get(ME, bodyOf(retry).accessToken)).status).toBe(200);
      expect(await trailOf(t, user.id)).toEqual([
        { type: 'registered', details: { familyId } },
        { type: 'token_refreshed', details: { familyId, generation: 0 } },
        { type: 'refresh_retried', details: { familyId, generation: 0 } },
      ]);
    });

    it('should answer every retry alike and let the successor rotate as usual afterwards', async () => {
      const user = await registerUser(t);
      const first = await rotate(t, user.refreshToken);
      for (let i = 0; i < 3; i += 1) {
        t.clock.advance(1000);
        expect(await rotate(t, user.refreshToken)).toEqual(first);
      }

      const next = await rotate(t, first.refreshToken);

      expect(next.refreshToken).not.toBe(first.refreshToken);
      expect(next.accessToken).not.toBe(first.accessToken);
      const familyId = (await findRefreshToken(t, user.refreshToken))?.familyId ?? '';
      expect((await findFamily(t, familyId)).map((token) => token.generation)).toEqual([0, 1, 2]);
      expect((await trailOf(t, user.id)).map((row) => row.type)).toEqual([
        'registered',
        'token_refreshed',
        'refresh_retried',
        'refresh_retried',
        'refresh_retried',
        'token_refreshed',
      ]);
    });

    it('should answer a retry with the account as it is now', async () => {
      const user = await registerUser(t);
      const first = await rotate(t, user.refreshToken);
      await t.dataSource.getRepository(User).update({ id: user.id }, { username: 'renamed' });

      const retry = await t.post(REFRESH, { refreshToken: user.refreshToken });

      expect(retry.json()).toEqual({
        ...first,
        user: { ...first.user, username: 'renamed' },
      });
    });

    it.each([5, 20])(
      'should give all of %i parallel presentations of one token the same pair, and rotate once',
      async (k) => {
        const user = await registerUser(t);

        const responses = await Promise.all(
          Array.from({ length: k }, () => t.post(REFRESH, { refreshToken: user.refreshToken })),
        );

        expect(responses.map((response) => response.status)).toEqual(Array(k).fill(200));
        const bodies = responses.map(bodyOf);
        expect(new Set(bodies.map((body) => JSON.stringify(body))).size).toBe(1);
        const familyId = (await findRefreshToken(t, user.refreshToken))?.familyId ?? '';
        expect((await findFamily(t, familyId)).map((token) => token.generation)).toEqual([0, 1]);
        const types = (await trailOf(t, user.id)).map((row) => row.type);
        expect(types.filter((type) => type === 'token_refreshed')).toHaveLength(1);
        expect(types.filter((type) => type === 'refresh_retried')).toHaveLength(k - 1);
        expect(types).not.toContain('reuse_detected');
        expect(await rotate(t, bodies[0].refreshToken)).toMatchObject({ user: bodies[0].user });
      },
    );
  });

  describe('what stays reuse', () => {
    const t = useTestApp({ environment: RETRY });

    /** `presented` must be refused as revoked, its session ended, the reuse in the trail. */
    async function expectReuse(
      user: RegisteredUser,
      presented: string,
      newest: string,
      sessionEnded: boolean,
    ): Promise<void> {
      const response = await t.post(REFRESH, { refreshToken: presented });
      expect(response.json()).toEqual(errorBody(401, REVOKED));
      expect((await t.post(REFRESH, { refreshToken: newest })).json()).toEqual(
        errorBody(401, REVOKED),
      );
      const trail = await trailOf(t, user.id);
      expect(trail.map((row) => row.type)).not.toContain('refresh_retried');
      expect(trail.filter((row) => row.type === 'reuse_detected')[0]?.details).toMatchObject({
        sessionEnded,
      });
    }

    it('should detect reuse at the window end exactly, and past it', async () => {
      const user = await registerUser(t);
      const first = await rotate(t, user.refreshToken);
      t.clock.advance(WINDOW_MS);

      await expectReuse(user, user.refreshToken, first.refreshToken, true);
    });

    it.each([1, 2, 3])(
      'should detect reuse of a token whose successor has since been rotated (%i rotations after it)',
      async (after) => {
        const user = await registerUser(t);
        let newest = (await rotate(t, user.refreshToken)).refreshToken;
        for (let i = 0; i < after; i += 1) {
          t.clock.advance(1000);
          newest = (await rotate(t, newest)).refreshToken;
        }
        await expectReuse(user, user.refreshToken, newest, true);
      },
    );

    it('should detect reuse after a logout of the successor, which had ended the session', async () => {
      const user = await registerUser(t);
      const first = await rotate(t, user.refreshToken);
      const logout = await t.post(
        REVOKE,
        { refreshToken: first.refreshToken, reason: 'logout' },
        first.accessToken,
      );
      expect(logout.json()).toEqual({ message: 'Token revocado exitosamente.' });

      await expectReuse(user, user.refreshToken, first.refreshToken, false);
    });

    it('should detect reuse after every session of the account was ended', async () => {
      const user = await registerUser(t);
      const first = await rotate(t, user.refreshToken);
      const ended = await t.post(REVOKE_ALL_SESSIONS, {}, first.accessToken);
      expect(ended.status).toBe(200);

      await expectReuse(user, user.refreshToken, first.refreshToken, false);
    });

    it('should detect reuse when the owner was deactivated since the rotation', async () => {
      const user = await registerUser(t);
      const first = await rotate(t, user.refreshToken);
      await t.dataSource.getRepository(User).update({ id: user.id }, { isActive: false });

      const response = await t.post(REFRESH, { refreshToken: user.refreshToken });

      expect(response.json()).toEqual(errorBody(401, REVOKED));
      expect(await findRefreshToken(t, first.refreshToken)).toMatchObject({
        isRevoked: true,
        reasonRevoked: 'Token reuse detectado',
      });
      const types = (await trailOf(t, user.id)).map((row) => row.type);
      expect(types).toContain('reuse_detected');
      expect(types).not.toContain('refresh_retried');
    });

    it('should refuse an unknown token as invalid, whatever the window', async () => {
      const response = await t.post(REFRESH, { refreshToken: 'x'.repeat(43) });

      expect(response.json()).toEqual(errorBody(401, 'Refresh token inválido.'));
    });
  });

  describe('with the window at 0 (the default)', () => {
    const t = useTestApp();

    it('should detect reuse of the predecessor presented again at once, as the interface says', async () => {
      const user = await registerUser(t);
      const first = await rotate(t, user.refreshToken);

      const response = await t.post(REFRESH, { refreshToken: user.refreshToken });

      expect(response.json()).toEqual(errorBody(401, REVOKED));
      expect((await t.post(REFRESH, { refreshToken: first.refreshToken })).json()).toEqual(
        errorBody(401, REVOKED),
      );
    });
  });

  describe('across restarts on one database', () => {
    let database: TestDatabase;
    let clock: FakeClock;
    const apps: TestApp[] = [];

    beforeEach(async () => {
      database = await createTestDatabase();
      clock = new FakeClock();
    });

    afterEach(async () => {
      await Promise.all(apps.splice(0).map((app) => app.close()));
      await database.drop();
    });

    const start = async (environment: Record<string, string>): Promise<TestApp> => {
      const app = await createTestApp({ database, clock, environment });
      apps.push(app);
      return app;
    };

    it('should detect reuse of a token rotated while the window was off', async () => {
      const before = await start({});
      const user = await registerUser(before);
      const first = await rotate(before, user.refreshToken);
      await before.close();
      apps.splice(0);
      const after = await start(RETRY);

      const response = await after.post(REFRESH, { refreshToken: user.refreshToken });

      expect(response.json()).toEqual(errorBody(401, REVOKED));
      expect((await after.post(REFRESH, { refreshToken: first.refreshToken })).json()).toEqual(
        errorBody(401, REVOKED),
      );
    });

    it('should give the same refresh token again after the signing secret was rolled', async () => {
      const before = await start(RETRY);
      const user = await registerUser(before);
      const first = await rotate(before, user.refreshToken);
      await before.close();
      apps.splice(0);
      const rolled = 'rolled-e2e-secret-key-0123456789abcdef-012345';
      const after = await start({
        ...RETRY,
        Jwt__SecretKey: rolled,
        Jwt__PreviousSecretKeys: TEST_SECRET_KEY,
      });

      const retry = await after.post(REFRESH, { refreshToken: user.refreshToken });

      expect(retry.status).toBe(200);
      const body = bodyOf(retry);
      expect(body.refreshToken).toBe(first.refreshToken);
      // Signed again under the new secret: the claims are the rotation's, the key id is new.
      const [again, original] = [body, first].map((pair) => decodeJwt(pair.accessToken));
      expect(again.payload).toEqual(original.payload);
      expect(again.header).not.toEqual(original.header);
      expect(body.accessTokenExpiry).toBe(first.accessTokenExpiry);
    });
  });
});

describeOnPostgres(
  'Jwt__RefreshRetryWindowSeconds on two instances of one PostgreSQL schema',
  () => {
    let cwd: string;
    let database: TestDatabase;
    let servers: ServerProcess[];

    beforeAll(async () => {
      cwd = mkdtempSync(join(tmpdir(), 'keygate-retry-'));
      database = await createTestDatabase();
      const env = {
        Jwt__SecretKey: TEST_SECRET_KEY,
        PasswordHashing__Iterations: String(TEST_HASH_ITERATIONS),
        ConnectionStrings__DefaultConnection: database.connectionString,
        TokenCleanup__Enabled: 'false',
        // Real clocks here: a window far longer than any burst of this test.
        Jwt__RefreshRetryWindowSeconds: '300',
      };
      servers = await Promise.all([0, 1].map(() => startServer({ env, cwd })));
    }, 60_000);

    afterAll(async () => {
      await stopAllServers();
      await database.drop();
      rmSync(cwd, { recursive: true, force: true });
    });

    const post = (server: ServerProcess, path: string, body: unknown): Promise<TestResponse> =>
      httpRequest(server.baseUrl, path, {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
        signal: AbortSignal.timeout(20_000),
      });

    it.each([2, 10, 50])(
      'should give all of %i presentations of one token, split between the instances, the same pair and rotate once',
      async (k) => {
        const registered = await post(servers[0], REGISTER, {
          username: 'retry',
          email: `retry-${k}-${Date.now()}@example.com`,
          password: 'S3cure!pass',
        });
        const { refreshToken, user } = bodyOf(registered);

        const responses = await Promise.all(
          Array.from({ length: k }, (_, i) => post(servers[i % 2], REFRESH, { refreshToken })),
        );

        expect(responses.map((response) => response.status)).toEqual(Array(k).fill(200));
        expect(new Set(responses.map((response) => response.text)).size).toBe(1);
        const tokens = await database.query<{ generation: number }>(
          'SELECT t.generation FROM refresh_tokens t JOIN sessions s ON s.id = t."sessionId" ' +
            'WHERE s."userId" = $1 ORDER BY t.generation',
          [user.id],
        );
        expect(tokens.map((token) => Number(token.generation))).toEqual([0, 1]);
        const types = (await auditRows(database, user.id)).map((row) => row.type);
        expect(types.filter((type) => type === 'token_refreshed')).toHaveLength(1);
        expect(types.filter((type) => type === 'refresh_retried')).toHaveLength(k - 1);
        expect(types).not.toContain('reuse_detected');
        const next = await post(servers[1], REFRESH, {
          refreshToken: bodyOf(responses[0]).refreshToken,
        });
        expect(next.status).toBe(200);
      },
      60_000,
    );
  },
);

describeOnPostgres('Jwt__RefreshRetryWindowSeconds: round trips to PostgreSQL', () => {
  let database: TestDatabase;
  let counter: RoundTripCounter;
  let t: TestApp;

  beforeAll(async () => {
    database = await createTestDatabase();
    const url = new URL(database.connectionString);
    counter = await startRoundTripCounter({ host: url.hostname, port: Number(url.port || 5432) });
    url.hostname = '127.0.0.1';
    url.port = String(counter.port);
    const connectionString = url.toString();
    t = await createTestApp({ database: { ...database, connectionString }, environment: RETRY });
    // Warm up: the pool's connection open, the named statements prepared.
    const warm = await registerUser(t);
    await rotate(t, warm.refreshToken);
    await rotate(t, warm.refreshToken);
  });

  afterAll(async () => {
    await t.close();
    await counter.close();
    await database.drop();
  });

  it('should still rotate in 1 with the window on, and answer a retry from one transaction', async () => {
    const user = await registerUser(t);
    await delay(50);
    counter.reset();
    const first = await rotate(t, user.refreshToken);
    await delay(50);
    expect(counter.count()).toBe(1);

    counter.reset();
    expect(await rotate(t, user.refreshToken)).toEqual(first);
    await delay(50);
    // The rotation statement, then BEGIN, the token with its session locked, the successor by
    // its digest, the owner, the audit row, its webhook deliveries (none here), COMMIT.
    expect(counter.count()).toBe(8);
  });
});
