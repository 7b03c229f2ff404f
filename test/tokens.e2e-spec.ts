import { jwtKey } from '../src/common/jwt/jwt-key.js';
import { createHash, randomBytes } from 'node:crypto';
import { TokenCleanupService } from '../src/tokens/cleanup/token-cleanup.service.js';
import { User } from '../src/users/entities/user.entity.js';
import {
  createRefreshToken,
  findFamily,
  findRefreshToken,
  findSession,
} from './factories/refresh-token.factory.js';
import { registerUser, type RegisteredUser } from './factories/user.factory.js';
import {
  TEST_SECRET_KEY,
  type TestApp,
  type TestResponse,
  useTestApp,
} from './utils/create-test-app.js';
import {
  authResponse,
  errorBody,
  problemDetails,
  UNAUTHORIZED_BODY,
} from './utils/expected-bodies.js';
import { decodeJwt } from './utils/jwt.js';
import { LOGIN, ME, REFRESH, REGISTER, REVOKE } from './utils/routes.js';

const MINUTE_MS = 60 * 1000;
const DAY_MS = 24 * 60 * MINUTE_MS;
const BASE64URL_256_BITS = /^[A-Za-z0-9_-]{43,}$/;

interface PublicUserBody {
  readonly id: string;
  readonly username: string;
  readonly email: string;
  readonly createdAt: string;
}

interface AuthBody {
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly accessTokenExpiry: string;
  readonly user: PublicUserBody;
}

interface AccessTokenClaims {
  readonly sub: string;
  /** The session: the family of the refresh token issued with it. */
  readonly sid: string;
  readonly email: string;
  readonly jti: string;
  readonly iat: number;
  readonly exp: number;
  readonly iss: string;
  readonly aud: string;
}

/** The payload of an access token, after asserting every claim has the expected type. */
function claimsOf(accessToken: string): AccessTokenClaims {
  const { payload } = decodeJwt(accessToken);
  expect(payload).toEqual({
    sub: expect.any(String),
    sid: expect.stringMatching(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    ),
    email: expect.any(String),
    email_verified: expect.any(Boolean),
    amr: expect.arrayContaining(['pwd']),
    jti: expect.any(String),
    iat: expect.any(Number),
    exp: expect.any(Number),
    iss: expect.any(String),
    aud: expect.any(String),
  });
  return payload as unknown as AccessTokenClaims;
}

function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

function refresh(t: TestApp, refreshToken: unknown): Promise<TestResponse> {
  return t.post(REFRESH, { refreshToken });
}

/** Refreshes and asserts the rotation succeeded. */
async function refreshOk(t: TestApp, refreshToken: string): Promise<AuthBody> {
  const response = await refresh(t, refreshToken);
  expect(response.status).toBe(200);
  return response.json<AuthBody>();
}

async function loginOk(t: TestApp, user: RegisteredUser): Promise<AuthBody> {
  const response = await t.post(LOGIN, { email: user.email, password: user.password });
  expect(response.status).toBe(200);
  return response.json<AuthBody>();
}

function revoke(t: TestApp, accessToken: string | undefined, body: unknown): Promise<TestResponse> {
  return t.post(REVOKE, body, accessToken);
}

/** The stored record of a raw token; fails the test when there is none. */
async function storedToken(t: TestApp, raw: string) {
  const token = await findRefreshToken(t, raw);
  if (token === null) {
    throw new Error('expected a stored refresh token for this raw value');
  }
  return token;
}

/** Every row of the tables, to show that a request changed nothing. */
async function snapshot(t: TestApp): Promise<unknown[]> {
  return [
    await t.dataSource.query<Record<string, unknown>[]>('SELECT * FROM users ORDER BY id'),
    await t.dataSource.query<Record<string, unknown>[]>('SELECT * FROM sessions ORDER BY id'),
    await t.dataSource.query<Record<string, unknown>[]>(
      'SELECT * FROM refresh_tokens ORDER BY "sessionId", generation',
    ),
  ];
}

function deactivate(t: TestApp, userId: string): Promise<unknown> {
  return t.dataSource.getRepository(User).update({ id: userId }, { isActive: false });
}

describe('Refresh and access tokens', () => {
  const t = useTestApp();

  describe('issuing (SPEC 3.2: none → active)', () => {
    it('should issue an active refresh token on register', async () => {
      const issuedAt = t.clock.now();

      const user = await registerUser(t);

      const token = await storedToken(t, user.refreshToken);
      expect(token).toMatchObject({
        userId: user.id,
        familyId: token.id,
        generation: 0,
        isRevoked: false,
        revokedAt: null,
        revokedByIp: null,
        reasonRevoked: null,
        replacedByTokenId: null,
        createdAt: issuedAt,
        expiresAt: new Date(issuedAt.getTime() + 7 * DAY_MS),
      });
      expect(user.refreshToken).toMatch(BASE64URL_256_BITS);
    });

    it('should issue an active refresh token on login, in a family of its own', async () => {
      const user = await registerUser(t);
      t.clock.advance(MINUTE_MS);
      const loggedInAt = t.clock.now();

      const body = await loginOk(t, user);

      expect(body).toEqual(authResponse(user));
      expect(body.refreshToken).not.toBe(user.refreshToken);
      const token = await storedToken(t, body.refreshToken);
      const registered = await storedToken(t, user.refreshToken);
      expect(token).toMatchObject({
        userId: user.id,
        familyId: token.id,
        generation: 0,
        isRevoked: false,
        replacedByTokenId: null,
        createdAt: loggedInAt,
        expiresAt: new Date(loggedInAt.getTime() + 7 * DAY_MS),
      });
      expect(token.familyId).not.toBe(registered.familyId);
      expect(registered.isRevoked).toBe(false);
      await refreshOk(t, body.refreshToken);
    });
  });

  describe('POST /api/auth/refresh', () => {
    it('should answer 200 with a new pair and the user when the token is active', async () => {
      const user = await registerUser(t);

      const response = await refresh(t, user.refreshToken);

      expect(response.status).toBe(200);
      const body = response.json<AuthBody>();
      expect(body).toEqual(authResponse(user));
      expect(body.user.id).toBe(user.id);
      expect(body.refreshToken).not.toBe(user.refreshToken);
      expect(body.accessToken).not.toBe(user.accessToken);
      const me = await t.get(ME, body.accessToken);
      expect(me.status).toBe(200);
    });

    it('should revoke the presented token and link it to an active replacement in its family', async () => {
      const user = await registerUser(t);
      t.clock.advance(60 * MINUTE_MS);
      const rotatedAt = t.clock.now();

      const body = await refreshOk(t, user.refreshToken);

      const old = await storedToken(t, user.refreshToken);
      const replacement = await storedToken(t, body.refreshToken);
      expect(old).toMatchObject({
        isRevoked: true,
        revokedAt: rotatedAt,
        replacedByTokenId: replacement.id,
      });
      expect(replacement).toMatchObject({
        userId: user.id,
        familyId: old.familyId,
        generation: old.generation + 1,
        isRevoked: false,
        revokedAt: null,
        reasonRevoked: null,
        replacedByTokenId: null,
        createdAt: rotatedAt,
        expiresAt: new Date(rotatedAt.getTime() + 7 * DAY_MS),
      });
      await refreshOk(t, body.refreshToken);
    });

    it('should answer 401 `Refresh token revocado.` to a replayed token, warn, and revoke its active descendants', async () => {
      const user = await registerUser(t);
      const second = (await refreshOk(t, user.refreshToken)).refreshToken;
      const third = (await refreshOk(t, second)).refreshToken;
      const last = (await refreshOk(t, third)).refreshToken;
      const warningsBefore = t.logger.at('warn').length;
      t.clock.advance(MINUTE_MS);

      const response = await refresh(t, user.refreshToken);

      expect(response.status).toBe(401);
      expect(response.json()).toEqual(errorBody(401, 'Refresh token revocado.'));
      expect(t.logger.at('warn')).toHaveLength(warningsBefore + 1);
      const lastToken = await storedToken(t, last);
      expect(lastToken).toMatchObject({
        generation: 3,
        isRevoked: true,
        revokedAt: t.clock.now(),
        reasonRevoked: 'Token reuse detectado',
      });
      const family = await findFamily(t, lastToken.familyId);
      expect(family.map((token) => token.isRevoked)).toEqual([true, true, true, true]);

      const withLast = await refresh(t, last);
      expect(withLast.status).toBe(401);
      expect(withLast.json()).toEqual(errorBody(401, 'Refresh token revocado.'));
    });

    it('should leave the other sessions of the same user active when reuse is detected', async () => {
      const user = await registerUser(t);
      const otherSession = await loginOk(t, user);
      await refreshOk(t, user.refreshToken);

      const replay = await refresh(t, user.refreshToken);

      expect(replay.status).toBe(401);
      expect(replay.json()).toEqual(errorBody(401, 'Refresh token revocado.'));
      expect(await storedToken(t, otherSession.refreshToken)).toMatchObject({ isRevoked: false });
      await refreshOk(t, otherSession.refreshToken);
    });

    it('should still rotate a token 1 ms before its 7 days have passed', async () => {
      const user = await registerUser(t);
      t.clock.advance(7 * DAY_MS - 1);

      const response = await refresh(t, user.refreshToken);

      expect(response.status).toBe(200);
      expect(response.json()).toEqual(authResponse(user));
    });

    it('should answer 401 `Refresh token expirado.` once 7 days and 1 ms have passed', async () => {
      const user = await registerUser(t);
      t.clock.advance(7 * DAY_MS + 1);

      const response = await refresh(t, user.refreshToken);

      expect(response.status).toBe(401);
      expect(response.json()).toEqual(errorBody(401, 'Refresh token expirado.'));
      expect(await storedToken(t, user.refreshToken)).toMatchObject({
        isRevoked: false,
        replacedByTokenId: null,
      });
    });

    const UNKNOWN_TOKENS: ReadonlyArray<readonly [string, (user: RegisteredUser) => string]> = [
      ['a well-formed random token', () => randomBytes(32).toString('base64url')],
      ['a token that is not base64url', () => 'not a refresh token!'],
      [
        'an issued token with one character changed',
        (user) => `${user.refreshToken.slice(0, -1)}${user.refreshToken.endsWith('A') ? 'B' : 'A'}`,
      ],
      ['the access token', (user) => user.accessToken],
    ];

    it.each(UNKNOWN_TOKENS)(
      'should answer 401 `Refresh token inválido.` and change nothing for %s',
      async (_name, unknownToken) => {
        const user = await registerUser(t);
        const before = await snapshot(t);
        const warningsBefore = t.logger.at('warn').length;

        const response = await refresh(t, unknownToken(user));

        expect(response.status).toBe(401);
        expect(response.json()).toEqual(errorBody(401, 'Refresh token inválido.'));
        expect(await snapshot(t)).toEqual(before);
        expect(t.logger.at('warn')).toHaveLength(warningsBefore);
      },
    );

    it('should answer 401 `Cuenta desactivada.` when the owner of the token is deactivated', async () => {
      const user = await registerUser(t);
      await deactivate(t, user.id);

      const response = await refresh(t, user.refreshToken);

      expect(response.status).toBe(401);
      expect(response.json()).toEqual(errorBody(401, 'Cuenta desactivada.'));
    });

    const INVALID_BODIES: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
      ['missing', {}],
      ['an empty string', { refreshToken: '' }],
      ['a number', { refreshToken: 12345 }],
      ['null', { refreshToken: null }],
    ];

    it.each(INVALID_BODIES)(
      'should answer 400 problem details when refreshToken is %s',
      async (_name, body) => {
        await registerUser(t);
        const before = await snapshot(t);

        const response = await t.post(REFRESH, body);

        expect(response.status).toBe(400);
        expect(response.json()).toEqual(problemDetails(['refreshToken']));
        expect(await snapshot(t)).toEqual(before);
      },
    );
  });

  describe('configuration', () => {
    describe('with Jwt__RefreshTokenExpiryDays=1', () => {
      const t = useTestApp({ environment: { Jwt__RefreshTokenExpiryDays: '1' } });

      it('should honour Jwt__RefreshTokenExpiryDays', async () => {
        const user = await registerUser(t);
        const secondSession = await loginOk(t, user);
        expect(await storedToken(t, user.refreshToken)).toMatchObject({
          expiresAt: new Date(t.clock.now().getTime() + DAY_MS),
        });

        t.clock.advance(DAY_MS - 1);
        await refreshOk(t, user.refreshToken);
        t.clock.advance(2);
        const response = await refresh(t, secondSession.refreshToken);

        expect(response.status).toBe(401);
        expect(response.json()).toEqual(errorBody(401, 'Refresh token expirado.'));
      });
    });

    describe('with Jwt__AccessTokenExpiryMinutes=5', () => {
      const t = useTestApp({ environment: { Jwt__AccessTokenExpiryMinutes: '5' } });

      it('should honour Jwt__AccessTokenExpiryMinutes', async () => {
        const user = await registerUser(t);
        const claims = claimsOf(user.accessToken);
        expect(claims.exp - claims.iat).toBe(5 * 60);

        t.clock.advance(5 * MINUTE_MS - 1000);
        expect((await t.get(ME, user.accessToken)).status).toBe(200);
        t.clock.advance(2000);
        const response = await t.get(ME, user.accessToken);

        expect(response.status).toBe(401);
        expect(response.json()).toEqual(UNAUTHORIZED_BODY);
      });
    });
  });

  describe('POST /api/auth/revoke', () => {
    it('should answer 401 Unauthorized without a bearer token and leave the token active', async () => {
      const user = await registerUser(t);

      const response = await revoke(t, undefined, { refreshToken: user.refreshToken });

      expect(response.status).toBe(401);
      const body = response.json();
      expect(body).toEqual(UNAUTHORIZED_BODY);
      expect(body).not.toHaveProperty('timestamp');
      expect(await storedToken(t, user.refreshToken)).toMatchObject({ isRevoked: false });
    });

    it('should answer 401 Unauthorized with an expired access token', async () => {
      const user = await registerUser(t);
      t.clock.advance(15 * MINUTE_MS + 1000);

      const response = await revoke(t, user.accessToken, { refreshToken: user.refreshToken });

      expect(response.status).toBe(401);
      expect(response.json()).toEqual(UNAUTHORIZED_BODY);
      expect(await storedToken(t, user.refreshToken)).toMatchObject({ isRevoked: false });
    });

    it('should answer 200 with exactly the confirmation and record the reason and client IP', async () => {
      const user = await registerUser(t);
      t.clock.advance(MINUTE_MS);

      const response = await revoke(t, user.accessToken, {
        refreshToken: user.refreshToken,
        reason: 'Cierre de sesión',
      });

      expect(response.status).toBe(200);
      expect(response.json()).toEqual({ message: 'Token revocado exitosamente.' });
      expect(await storedToken(t, user.refreshToken)).toMatchObject({
        isRevoked: true,
        revokedAt: t.clock.now(),
        revokedByIp: '127.0.0.1',
        reasonRevoked: 'Cierre de sesión',
      });
    });

    it('should record a default reason when none is given', async () => {
      const user = await registerUser(t);

      const response = await revoke(t, user.accessToken, { refreshToken: user.refreshToken });

      expect(response.status).toBe(200);
      expect(response.json()).toEqual({ message: 'Token revocado exitosamente.' });
      const token = await storedToken(t, user.refreshToken);
      expect(token).toMatchObject({ isRevoked: true, revokedByIp: '127.0.0.1' });
      expect(token.reasonRevoked).toEqual(expect.stringMatching(/\S/));
    });

    it('should make the revoked token unable to refresh', async () => {
      const user = await registerUser(t);
      const revoked = await revoke(t, user.accessToken, { refreshToken: user.refreshToken });
      expect(revoked.status).toBe(200);

      const response = await refresh(t, user.refreshToken);

      expect(response.status).toBe(401);
      expect(response.json()).toEqual(errorBody(401, 'Refresh token revocado.'));
    });

    it('should answer 401 `Refresh token inválido.` for a token that does not exist', async () => {
      const user = await registerUser(t);
      const before = await snapshot(t);

      const response = await revoke(t, user.accessToken, {
        refreshToken: randomBytes(32).toString('base64url'),
      });

      expect(response.status).toBe(401);
      expect(response.json()).toEqual(errorBody(401, 'Refresh token inválido.'));
      expect(await snapshot(t)).toEqual(before);
    });

    it("should answer 401 `Refresh token inválido.` for another user's token and leave it usable", async () => {
      const owner = await registerUser(t);
      const intruder = await registerUser(t);

      const response = await revoke(t, intruder.accessToken, { refreshToken: owner.refreshToken });

      expect(response.status).toBe(401);
      expect(response.json()).toEqual(errorBody(401, 'Refresh token inválido.'));
      expect(await storedToken(t, owner.refreshToken)).toMatchObject({
        isRevoked: false,
        revokedByIp: null,
        reasonRevoked: null,
      });
      await refreshOk(t, owner.refreshToken);
    });

    it('should answer 200 for an own token already revoked and keep the first reason and time', async () => {
      const user = await registerUser(t);
      const first = await revoke(t, user.accessToken, {
        refreshToken: user.refreshToken,
        reason: 'Primera revocación',
      });
      expect(first.status).toBe(200);
      const firstRevokedAt = t.clock.now();
      t.clock.advance(MINUTE_MS);

      const response = await revoke(t, user.accessToken, {
        refreshToken: user.refreshToken,
        reason: 'Segunda revocación',
      });

      expect(response.status).toBe(200);
      expect(response.json()).toEqual({ message: 'Token revocado exitosamente.' });
      expect(await storedToken(t, user.refreshToken)).toMatchObject({
        isRevoked: true,
        revokedAt: firstRevokedAt,
        revokedByIp: '127.0.0.1',
        reasonRevoked: 'Primera revocación',
      });
    });

    it('should keep the IP of the first revocation when an own revoked token is revoked again', async () => {
      const user = await registerUser(t);
      const revokedAt = t.clock.now();
      const { raw } = await createRefreshToken(t, user.id, {
        isRevoked: true,
        revokedAt,
        revokedByIp: '203.0.113.7',
        reasonRevoked: 'Revocado desde otro equipo',
      });
      t.clock.advance(MINUTE_MS);

      const response = await revoke(t, user.accessToken, { refreshToken: raw, reason: 'Otra' });

      expect(response.status).toBe(200);
      expect(response.json()).toEqual({ message: 'Token revocado exitosamente.' });
      expect(await storedToken(t, raw)).toMatchObject({
        isRevoked: true,
        revokedAt,
        revokedByIp: '203.0.113.7',
        reasonRevoked: 'Revocado desde otro equipo',
      });
    });

    it('should accept a reason of 500 characters and store it whole', async () => {
      const user = await registerUser(t);
      const reason = 'r'.repeat(500);

      const response = await revoke(t, user.accessToken, {
        refreshToken: user.refreshToken,
        reason,
      });

      expect(response.status).toBe(200);
      expect(response.json()).toEqual({ message: 'Token revocado exitosamente.' });
      expect(await storedToken(t, user.refreshToken)).toMatchObject({
        isRevoked: true,
        reasonRevoked: reason,
      });
    });

    const INVALID_REVOKE_BODIES: ReadonlyArray<
      readonly [string, (user: RegisteredUser) => Record<string, unknown>, string]
    > = [
      [
        'the reason is over 500 characters',
        (user) => ({ refreshToken: user.refreshToken, reason: 'r'.repeat(501) }),
        'reason',
      ],
      [
        'the reason is not a string',
        (user) => ({ refreshToken: user.refreshToken, reason: 42 }),
        'reason',
      ],
      ['the refreshToken is missing', () => ({ reason: 'Cierre de sesión' }), 'refreshToken'],
      ['the refreshToken is empty', () => ({ refreshToken: '' }), 'refreshToken'],
    ];

    it.each(INVALID_REVOKE_BODIES)(
      'should answer 400 problem details when %s',
      async (_name, body, field) => {
        const user = await registerUser(t);

        const response = await revoke(t, user.accessToken, body(user));

        expect(response.status).toBe(400);
        expect(response.json()).toEqual(problemDetails([field]));
        expect(await storedToken(t, user.refreshToken)).toMatchObject({ isRevoked: false });
      },
    );

    it('should log the revocation at information level', async () => {
      const user = await registerUser(t);
      const infoBefore = t.logger.at('log').length;

      const response = await revoke(t, user.accessToken, { refreshToken: user.refreshToken });

      expect(response.status).toBe(200);
      expect(t.logger.at('log')).toHaveLength(infoBefore + 1);
    });
  });

  describe('access tokens (SPEC 5 and 2.3)', () => {
    it('should be a JWT signed with HS256', async () => {
      const user = await registerUser(t);

      const { header } = decodeJwt(user.accessToken);

      expect(header).toEqual({ alg: 'HS256', typ: 'JWT', kid: jwtKey(TEST_SECRET_KEY).kid });
    });

    it('should carry the user, its session, a jti, the default issuer and audience, and expire in 15 minutes', async () => {
      t.clock.advance(1500);
      const issuedAt = t.clock.now();
      const user = await registerUser(t);

      const response = await refresh(t, user.refreshToken);

      expect(response.status).toBe(200);
      const body = response.json<AuthBody>();
      for (const accessToken of [user.accessToken, body.accessToken]) {
        const claims = claimsOf(accessToken);
        expect(claims).toEqual({
          sub: user.id,
          sid: (await findRefreshToken(t, user.refreshToken))?.familyId,
          email: user.email,
          // No mail is configured here, so the address is not verified.
          email_verified: false,
          // How the session was authenticated (RFC 8176): a password alone here.
          amr: ['pwd'],
          jti: expect.stringMatching(/\S/),
          iat: Math.floor(issuedAt.getTime() / 1000),
          exp: Math.floor(issuedAt.getTime() / 1000) + 15 * 60,
          iss: 'keygate',
          aud: 'keygate-clients',
        });
      }
      const claims = claimsOf(body.accessToken);
      expect(claims.exp - claims.iat).toBe(15 * 60);
      expect(body.accessTokenExpiry).toBe(new Date(claims.exp * 1000).toISOString());
    });

    it('should state the exp of the access token as accessTokenExpiry on register and login', async () => {
      const credentials = {
        username: 'expiry',
        email: 'expiry@example.com',
        password: 'S3cure!pass',
      };
      const registered = await t.post(REGISTER, credentials);
      expect(registered.status).toBe(201);
      t.clock.advance(MINUTE_MS + 250);
      const login = await t.post(LOGIN, {
        email: credentials.email,
        password: credentials.password,
      });
      expect(login.status).toBe(200);

      for (const body of [registered.json<AuthBody>(), login.json<AuthBody>()]) {
        const claims = claimsOf(body.accessToken);
        expect(body.accessTokenExpiry).toBe(new Date(claims.exp * 1000).toISOString());
      }
      const loginClaims = claimsOf(login.json<AuthBody>().accessToken);
      expect(loginClaims.iat).toBe(Math.floor(t.clock.now().getTime() / 1000));
      expect(loginClaims.exp - loginClaims.iat).toBe(15 * 60);
    });

    it('should give every issued access token a distinct jti', async () => {
      const user = await registerUser(t);
      const accessTokens = [user.accessToken];
      let refreshToken = user.refreshToken;
      for (let i = 0; i < 5; i += 1) {
        accessTokens.push((await loginOk(t, user)).accessToken);
        const rotated = await refreshOk(t, refreshToken);
        accessTokens.push(rotated.accessToken);
        refreshToken = rotated.refreshToken;
      }

      const jtis = accessTokens.map((token) => claimsOf(token).jti);

      expect(new Set(jtis).size).toBe(accessTokens.length);
      expect(new Set(accessTokens).size).toBe(accessTokens.length);
    });
  });

  describe('refresh token values', () => {
    /** Issues tokens through every path; returns every raw refresh token handed out. */
    async function issueMany(count: number): Promise<{ user: RegisteredUser; raws: string[] }> {
      const user = await registerUser(t);
      const raws = [user.refreshToken];
      let current = user.refreshToken;
      for (let i = 0; i < count; i += 1) {
        raws.push((await loginOk(t, user)).refreshToken);
        current = (await refreshOk(t, current)).refreshToken;
        raws.push(current);
      }
      return { user, raws };
    }

    it('should be at least 43 base64url characters and distinct across many issues', async () => {
      const { raws } = await issueMany(12);

      for (const raw of raws) {
        expect(raw).toMatch(BASE64URL_256_BITS);
      }
      expect(new Set(raws).size).toBe(raws.length);
    });

    it('should never store the raw value, only its SHA-256 as 32 bytes', async () => {
      const { user, raws } = await issueMany(3);
      const revoked = await revoke(t, user.accessToken, { refreshToken: raws[1] });
      expect(revoked.status).toBe(200);

      const rows = await t.dataSource.query<Record<string, unknown>[]>(
        'SELECT * FROM refresh_tokens',
      );

      expect(rows).toHaveLength(raws.length);
      for (const raw of raws) {
        for (const row of rows) {
          for (const value of Object.values(row)) {
            expect(String(value)).not.toContain(raw);
          }
        }
        const matching = rows.filter(
          (row) =>
            Buffer.isBuffer(row.tokenHash) && row.tokenHash.toString('hex') === sha256Hex(raw),
        );
        expect(matching).toHaveLength(1);
        expect(matching[0].tokenHash).toHaveLength(32);
      }
    });
  });

  describe('the expired-token cleanup (decision 0027)', () => {
    it("should delete a live session's rotated tokens a lifetime and the retention after their creation, and no sooner", async () => {
      const user = await registerUser(t);
      const chain = [user.refreshToken];
      for (let i = 0; i < 3; i += 1) {
        t.clock.advance(5 * DAY_MS);
        chain.push((await refreshOk(t, chain[chain.length - 1])).refreshToken);
      }
      const cleanup = t.app.get(TokenCleanupService);

      // Day 15: generation 0 (day 0) would have expired on day 7, 7 days of retention ago and
      // more; generation 1 (day 5) on day 12, within them.
      expect(await cleanup.purgeExpired()).toBe(1);

      expect(await findRefreshToken(t, chain[0])).toBeNull();
      expect((await refresh(t, chain[0])).json()).toEqual(
        errorBody(401, 'Refresh token inválido.'),
      );
      expect(await findFamily(t, (await storedToken(t, chain[1])).familyId)).toHaveLength(3);
      // Still known: presenting it is reuse, and it ends the session.
      expect((await refresh(t, chain[1])).json()).toEqual(
        errorBody(401, 'Refresh token revocado.'),
      );
      expect((await refresh(t, chain[3])).json()).toEqual(
        errorBody(401, 'Refresh token revocado.'),
      );
    });

    it('should delete a session with its tokens once its expiry is the retention ago', async () => {
      const user = await registerUser(t);
      const refreshed = await refreshOk(t, user.refreshToken);
      const familyId = (await storedToken(t, refreshed.refreshToken)).familyId;
      const cleanup = t.app.get(TokenCleanupService);

      t.clock.advance(14 * DAY_MS);
      expect(await cleanup.purgeExpired()).toBe(0);
      t.clock.advance(1);
      expect(await cleanup.purgeExpired()).toBe(2);

      expect(await findFamily(t, familyId)).toEqual([]);
      expect(await findSession(t, familyId)).toBeNull();
    });
  });

  describe('logging', () => {
    it('should never write an access or refresh token to the log', async () => {
      const user = await registerUser(t);
      const login = await loginOk(t, user);
      const rotated = await refreshOk(t, user.refreshToken);
      const replay = await refresh(t, user.refreshToken);
      expect(replay.status).toBe(401);
      const revoked = await revoke(t, login.accessToken, { refreshToken: login.refreshToken });
      expect(revoked.status).toBe(200);
      const unknown = randomBytes(32).toString('base64url');
      expect((await refresh(t, unknown)).status).toBe(401);
      expect((await revoke(t, login.accessToken, { refreshToken: unknown })).status).toBe(401);
      expect((await t.get(ME, rotated.accessToken)).status).toBe(200);
      t.clock.advance(8 * DAY_MS);
      expect((await refresh(t, rotated.refreshToken)).status).toBe(401);
      expect((await t.get(ME, rotated.accessToken)).status).toBe(401);

      const log = t.logger.allText();

      expect(t.logger.at('warn').length).toBeGreaterThan(0);
      expect(t.logger.at('log').length).toBeGreaterThan(0);
      const accessTokens = [user.accessToken, login.accessToken, rotated.accessToken];
      for (const accessToken of accessTokens) {
        expect(log).not.toContain(accessToken);
        expect(log).not.toContain(accessToken.split('.')[2]);
      }
      for (const refreshToken of [
        user.refreshToken,
        login.refreshToken,
        rotated.refreshToken,
        unknown,
      ]) {
        expect(log).not.toContain(refreshToken);
      }
    });
  });
});
