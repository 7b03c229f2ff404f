import { randomUUID } from 'node:crypto';
import { AdminModule } from '../src/admin/admin.module.js';
import { AdminService } from '../src/admin/admin.service.js';
import { RandomSource } from '../src/common/random/random-source.js';
import { internalOrigin } from '../src/common/request-origin/request-origin.js';
import { SessionRepository } from '../src/tokens/storage/session.repository.js';
import { findRefreshToken } from './factories/refresh-token.factory.js';
import { registerUser, type RegisteredUser } from './factories/user.factory.js';
import {
  createTestApp,
  TEST_SECRET_KEY,
  type TestApp,
  type TestResponse,
  useSharedTestApp,
  useTestApp,
} from './utils/create-test-app.js';
import { bearerRefusal, challengeOf, errorBody, publicUser } from './utils/expected-bodies.js';
import { accessTokenClaims, decodeJwt, signJwt } from './utils/jwt.js';
import {
  EMAIL_CHANGE,
  EMAIL_VERIFY_RESEND,
  LOGIN,
  ME,
  PASSWORD_CHANGE,
  REFRESH,
  REVOKE,
  REVOKE_ALL_SESSIONS,
  SESSIONS,
} from './utils/routes.js';
import { onPostgres } from './utils/test-database.js';

// Access tokens name their session (`sid`, the refresh-token family). With
// Jwt__RequireActiveSession=true every protected route refuses a token whose session has ended;
// by default tokens stay valid until they expire, as SPEC fixes.

const DAY_MS = 24 * 60 * 60 * 1000;
const REQUIRE = { Jwt__RequireActiveSession: 'true' };
const INVALID_TOKEN = 'Bearer error="invalid_token"';

interface Pair {
  readonly accessToken: string;
  readonly refreshToken: string;
}

/** Every protected route, each called as a client would with a token of `user`. */
const PROTECTED: ReadonlyArray<
  readonly [
    string,
    (t: TestApp, user: RegisteredUser, accessToken: string) => Promise<TestResponse>,
  ]
> = [
  [`GET ${ME}`, (t, _user, token) => t.get(ME, token)],
  [`GET ${SESSIONS}`, (t, _user, token) => t.get(SESSIONS, token)],
  [`POST ${REVOKE}`, (t, _user, token) => t.post(REVOKE, { refreshToken: 'not-a-token' }, token)],
  [
    `POST ${REVOKE_ALL_SESSIONS}`,
    (t, _user, token) =>
      t.post(REVOKE_ALL_SESSIONS, { keepCurrent: true, refreshToken: 'x' }, token),
  ],
  [
    `POST ${PASSWORD_CHANGE}`,
    (t, user, token) =>
      t.post(PASSWORD_CHANGE, { currentPassword: user.password, newPassword: 'N3w!secure' }, token),
  ],
  [`POST ${EMAIL_VERIFY_RESEND}`, (t, _user, token) => t.post(EMAIL_VERIFY_RESEND, {}, token)],
  [
    `POST ${EMAIL_CHANGE}`,
    (t, user, token) =>
      t.post(EMAIL_CHANGE, { password: user.password, newEmail: `new-${user.email}` }, token),
  ],
  [
    `DELETE ${ME}`,
    (t, user, token) =>
      t.request(ME, {
        method: 'DELETE',
        body: JSON.stringify({ password: user.password }),
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      }),
  ],
];

async function login(t: TestApp, user: RegisteredUser): Promise<Pair> {
  const response = await t.post(LOGIN, { email: user.email, password: user.password });
  expect(response.status).toBe(200);
  return response.json<Pair>();
}

async function refresh(t: TestApp, refreshToken: string): Promise<Pair> {
  const response = await t.post(REFRESH, { refreshToken });
  expect(response.status).toBe(200);
  return response.json<Pair>();
}

/** The bearer guard's refusal of a token: SPEC §7's bare 401, with the RFC 6750 challenge. */
function expectRefused(response: TestResponse): void {
  expect(challengeOf(response)).toEqual(bearerRefusal(INVALID_TOKEN));
}

/**
 * The plan of the session check's one statement. PostgreSQL is told to avoid a full scan, which
 * a table this small invites; what matters is that the index alone finds the row, in order.
 */
async function planOf(t: TestApp, sessionId: string): Promise<string> {
  const sessionById = t.app.get(SessionRepository).selectSql('$1');
  if (!onPostgres) {
    const rows = await t.database.query<{ detail: string }>(
      `EXPLAIN QUERY PLAN ${sessionById.replace('$1', '?')}`,
      [sessionId],
    );
    return rows.map((row) => row.detail).join('\n');
  }
  const runner = t.dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.startTransaction();
    await runner.query('SET LOCAL enable_seqscan = off');
    const rows = (await runner.query(`EXPLAIN (COSTS OFF) ${sessionById}`, [sessionId])) as Array<{
      'QUERY PLAN': string;
    }>;
    await runner.rollbackTransaction();
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  } finally {
    await runner.release();
  }
}

/** The admin CLI's module is mounted too, to deactivate accounts as an operator does. */
const WITH_ADMIN = { imports: [AdminModule] };

describe('The session of an access token', () => {
  describe('the sid claim', () => {
    const t = useSharedTestApp();

    it('should name the family of the refresh token issued with it, on every issue', async () => {
      const user = await registerUser(t);
      const loggedIn = await login(t, user);
      const refreshed = await refresh(t, loggedIn.refreshToken);

      for (const pair of [user, loggedIn, refreshed]) {
        const stored = await findRefreshToken(t, pair.refreshToken);
        expect(decodeJwt(pair.accessToken).payload.sid).toBe(stored?.familyId);
      }
      expect(decodeJwt(refreshed.accessToken).payload.sid).toBe(
        decodeJwt(loggedIn.accessToken).payload.sid,
      );
      expect(decodeJwt(loggedIn.accessToken).payload.sid).not.toBe(
        decodeJwt(user.accessToken).payload.sid,
      );
    });

    it('should be refused when it is not a UUID, like any forged claim', async () => {
      const user = await registerUser(t);
      const claims = accessTokenClaims(user, t.clock.now(), { sid: 'not-a-session' });
      const token = signJwt({ alg: 'HS256', typ: 'JWT' }, claims, TEST_SECRET_KEY);

      expectRefused(await t.get(ME, token));
    });
  });

  describe('by default (Jwt__RequireActiveSession=false)', () => {
    const t = useSharedTestApp();

    it('should keep accepting the access token of a session that has ended, until it expires', async () => {
      const user = await registerUser(t);
      const revoke = await t.post(REVOKE, { refreshToken: user.refreshToken }, user.accessToken);
      expect(revoke.status).toBe(200);

      const response = await t.get(ME, user.accessToken);

      expect({ status: response.status, body: response.json() }).toEqual({
        status: 200,
        body: publicUser(user),
      });
    });

    it('should accept a token without sid', async () => {
      const user = await registerUser(t);
      const claims = accessTokenClaims(user, t.clock.now());
      const token = signJwt({ alg: 'HS256', typ: 'JWT' }, claims, TEST_SECRET_KEY);

      expect((await t.get(ME, token)).status).toBe(200);
    });
  });

  describe('with Jwt__RequireActiveSession=true', () => {
    const t = useTestApp({ ...WITH_ADMIN, environment: REQUIRE });

    it('should serve the token of an active session on every protected route', async () => {
      const user = await registerUser(t);

      const me = await t.get(ME, user.accessToken);
      const sessions = await t.get(SESSIONS, user.accessToken);

      expect({ status: me.status, body: me.json() }).toEqual({
        status: 200,
        body: publicUser(user),
      });
      expect(sessions.status).toBe(200);
    });

    it('should keep serving the tokens issued before a refresh: rotation continues the session', async () => {
      const user = await registerUser(t);
      const refreshed = await refresh(t, user.refreshToken);

      for (const token of [user.accessToken, refreshed.accessToken]) {
        expect((await t.get(ME, token)).status).toBe(200);
      }
    });

    it.each(PROTECTED)(
      'should refuse on %s the token of a session ended by logout',
      async (_route, call) => {
        const user = await registerUser(t);
        const other = await login(t, user);
        const revoke = await t.post(REVOKE, { refreshToken: user.refreshToken }, user.accessToken);
        expect(revoke.status).toBe(200);

        expectRefused(await call(t, user, user.accessToken));
        const stillServed = await t.get(ME, other.accessToken);
        expect(stillServed.status).toBe(200);
      },
    );

    it('should refuse the tokens of the sessions ended by revoke-all, and keep the one kept', async () => {
      const user = await registerUser(t);
      const second = await login(t, user);
      const third = await login(t, user);

      const response = await t.post(
        REVOKE_ALL_SESSIONS,
        { keepCurrent: true, refreshToken: third.refreshToken },
        third.accessToken,
      );

      expect(response.json()).toEqual({
        message: 'Sesiones revocadas exitosamente.',
        revokedSessions: 2,
      });
      expectRefused(await t.get(ME, user.accessToken));
      expectRefused(await t.get(ME, second.accessToken));
      expect((await t.get(ME, third.accessToken)).status).toBe(200);
    });

    it('should refuse the tokens of a session ended by reuse detection', async () => {
      const user = await registerUser(t);
      const rotated = await refresh(t, user.refreshToken);
      const replay = await t.post(REFRESH, { refreshToken: user.refreshToken });
      expect(replay.json()).toEqual(errorBody(401, 'Refresh token revocado.'));

      expectRefused(await t.get(ME, rotated.accessToken));
      expectRefused(await t.get(ME, user.accessToken));
    });

    it('should keep refusing the tokens of the sessions a deactivation ended once the account is active again', async () => {
      const user = await registerUser(t);
      const second = await login(t, user);
      const admin = t.app.get(AdminService);

      await admin.deactivate({ email: user.email }, internalOrigin('cli', t.app.get(RandomSource)));
      const whileDeactivated = await t.get(ME, user.accessToken);
      await admin.activate({ email: user.email }, internalOrigin('cli', t.app.get(RandomSource)));

      // The bearer guard's own account check answers first while the account is deactivated.
      expect({ status: whileDeactivated.status, body: whileDeactivated.json() }).toEqual({
        status: 401,
        body: errorBody(401, 'Cuenta desactivada.'),
      });
      expectRefused(await t.get(ME, user.accessToken));
      expectRefused(await t.get(ME, second.accessToken));
      const fresh = await login(t, user);
      expect((await t.get(ME, fresh.accessToken)).status).toBe(200);
    });

    it('should refuse a token without sid, and one naming a session that does not exist', async () => {
      const user = await registerUser(t);
      const header = { alg: 'HS256', typ: 'JWT' };
      const now = t.clock.now();
      const withoutSid = signJwt(header, accessTokenClaims(user, now), TEST_SECRET_KEY);
      const unknownSid = signJwt(
        header,
        accessTokenClaims(user, now, { sid: randomUUID() }),
        TEST_SECRET_KEY,
      );

      expectRefused(await t.get(ME, withoutSid));
      expectRefused(await t.get(ME, unknownSid));
    });

    it("should refuse a token naming another user's active session", async () => {
      const user = await registerUser(t);
      const other = await registerUser(t);
      const { sid } = decodeJwt(other.accessToken).payload;
      const token = signJwt(
        { alg: 'HS256', typ: 'JWT' },
        accessTokenClaims(user, t.clock.now(), { sid }),
        TEST_SECRET_KEY,
      );

      expectRefused(await t.get(ME, token));
    });

    it('should leave the open routes alone', async () => {
      const user = await registerUser(t);
      await t.post(REVOKE, { refreshToken: user.refreshToken }, user.accessToken);

      const response = await t.post(
        LOGIN,
        { email: user.email, password: user.password },
        user.accessToken,
      );

      expect(response.status).toBe(200);
    });
  });

  it('should refuse the access token of a session whose refresh token expired', async () => {
    // Access tokens that outlive refresh tokens: only an operator's odd settings allow it.
    const t = await createTestApp({
      environment: {
        ...REQUIRE,
        Jwt__AccessTokenExpiryMinutes: String(10 * 24 * 60),
        Jwt__RefreshTokenExpiryDays: '7',
      },
    });
    try {
      const user = await registerUser(t);
      t.clock.advance(7 * DAY_MS - 1000);
      expect((await t.get(ME, user.accessToken)).status).toBe(200);
      t.clock.advance(2000);

      expectRefused(await t.get(ME, user.accessToken));
    } finally {
      await t.close();
    }
  });

  describe('the cost of the check', () => {
    it("should read one row by the session's primary key, without sorting, whatever its generations", async () => {
      const t = await createTestApp({ environment: REQUIRE });
      try {
        const user = await registerUser(t);
        let refreshToken = user.refreshToken;
        for (let i = 0; i < 30; i++) {
          refreshToken = (await refresh(t, refreshToken)).refreshToken;
        }
        const { sid } = decodeJwt(user.accessToken).payload;

        const text = await planOf(t, String(sid));

        expect(text).toMatch(
          /USING (INDEX sqlite_autoindex_sessions_1|PRIMARY KEY)|Index Scan using "?PK_/,
        );
        expect(text).not.toMatch(/TEMP B-TREE|Sort/i);
      } finally {
        await t.close();
      }
    });
  });
});
