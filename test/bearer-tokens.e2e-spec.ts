import { IsNull } from 'typeorm';
import { Session } from '../src/tokens/entities/session.entity.js';
import { User } from '../src/users/entities/user.entity.js';
import { GreetingModule } from './extending/greeting.module.js';
import { registerUser, type RegisteredUser } from './factories/user.factory.js';
import { createTestApp, TEST_SECRET_KEY, type TestApp } from './utils/create-test-app.js';
import { errorBody, UNAUTHORIZED_BODY } from './utils/expected-bodies.js';
import { accessTokenClaims, ACCESS_TOKEN_LIFETIME_S, signJwt } from './utils/jwt.js';

const ME = '/api/auth/me';

/** A token signed with the service's secret: only what the test changes can make it fail. */
function token(
  user: RegisteredUser,
  now: Date,
  header: Record<string, unknown> = {},
  claims: Record<string, unknown> = {},
  removed: readonly string[] = [],
): string {
  return signJwt(
    { alg: 'HS256', typ: 'JWT', ...header },
    accessTokenClaims(user, now, claims, removed),
    TEST_SECRET_KEY,
  );
}

function nowSeconds(t: TestApp): number {
  return Math.floor(t.clock.now().getTime() / 1000);
}

describe('bearer tokens', () => {
  let t: TestApp;
  let user: RegisteredUser;

  beforeAll(async () => {
    t = await createTestApp();
    user = await registerUser(t);
  });

  afterAll(async () => {
    await t.close();
  });

  it('should accept a crafted token like the ones it issues (the control case)', async () => {
    const response = await t.get(ME, token(user, t.clock.now()));

    expect(response.status).toBe(200);
  });

  it.each([
    ['a crit member naming an extension', { crit: ['exp'] }],
    ['an empty crit member', { crit: [] }],
    ['a crit member that is not a list', { crit: 'b64' }],
  ])('should refuse a token whose header has %s (RFC 7515 §4.1.11)', async (_case, header) => {
    const response = await t.get(ME, token(user, t.clock.now(), header));

    expect(response.status).toBe(401);
    expect(response.json()).toEqual(UNAUTHORIZED_BODY);
  });

  it.each([
    ['no typ', { typ: undefined }],
    ['typ "jwt"', { typ: 'jwt' }],
    ['typ "at+jwt"', { typ: 'at+jwt' }],
    ['typ "JOSE"', { typ: 'JOSE' }],
    ['a typ that is not a string', { typ: 1 }],
  ])('should refuse a token whose header has %s', async (_case, header) => {
    const response = await t.get(ME, token(user, t.clock.now(), header));

    expect(response.json()).toEqual(UNAUTHORIZED_BODY);
  });

  it('should refuse a token issued in the future, however long it lives', async () => {
    const iat = nowSeconds(t) + 60;

    const response = await t.get(ME, token(user, t.clock.now(), {}, { iat, exp: iat + 60 }));

    expect(response.json()).toEqual(UNAUTHORIZED_BODY);
  });

  it('should refuse a token without iat, which cannot say how long it lives', async () => {
    const response = await t.get(ME, token(user, t.clock.now(), {}, {}, ['iat']));

    expect(response.json()).toEqual(UNAUTHORIZED_BODY);
  });

  it.each([
    ['one second longer than the configured lifetime', 401, ACCESS_TOKEN_LIFETIME_S + 1],
    ['a year', 401, 365 * 24 * 3600],
    ['exactly the configured lifetime', 200, ACCESS_TOKEN_LIFETIME_S],
  ])('a token that lives %s should answer %i', async (_case, status, lifetime) => {
    const iat = nowSeconds(t) - 5;

    const response = await t.get(ME, token(user, t.clock.now(), {}, { iat, exp: iat + lifetime }));

    expect(response.status).toBe(status);
  });
});

describe('bearer tokens with a clock tolerance (Jwt__ClockSkewSeconds=30)', () => {
  let t: TestApp;
  let user: RegisteredUser;

  beforeAll(async () => {
    t = await createTestApp({ environment: { Jwt__ClockSkewSeconds: '30' } });
    user = await registerUser(t);
  });

  afterAll(async () => {
    await t.close();
  });

  it.each([
    ['iat 30 s ahead', 200, 30, ACCESS_TOKEN_LIFETIME_S],
    ['iat 31 s ahead', 401, 31, ACCESS_TOKEN_LIFETIME_S],
    ['a lifetime 30 s over', 200, 0, ACCESS_TOKEN_LIFETIME_S + 30],
    ['a lifetime 31 s over', 401, 0, ACCESS_TOKEN_LIFETIME_S + 31],
  ])(
    'should allow the tolerance and no more: %s answers %i',
    async (_case, status, ahead, lifetime) => {
      const iat = Math.floor(t.clock.now().getTime() / 1000) + ahead;

      const response = await t.get(
        ME,
        token(user, t.clock.now(), {}, { iat, exp: iat + lifetime }),
      );

      expect(response.status).toBe(status);
    },
  );
});

describe('the account behind a valid token', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ imports: [GreetingModule] });
  });

  afterAll(async () => {
    await t.close();
  });

  /** Every protected route, the extension module's included, called with `accessToken`. */
  function everyProtectedRoute(user: RegisteredUser) {
    return [
      () => t.get(ME, user.accessToken),
      () => t.get('/api/auth/sessions', user.accessToken),
      () => t.post('/api/auth/sessions/revoke-all', {}, user.accessToken),
      () => t.post('/api/auth/revoke', { refreshToken: user.refreshToken }, user.accessToken),
      () => t.get('/api/greetings/me', user.accessToken),
    ];
  }

  async function setActive(user: RegisteredUser, isActive: boolean): Promise<void> {
    await t.dataSource.getRepository(User).update({ id: user.id }, { isActive });
  }

  it('should answer 401 "Cuenta desactivada." on every protected route once the account is deactivated', async () => {
    const user = await registerUser(t);
    // Used once before, so the token is in the verified-token cache.
    expect((await t.get('/api/auth/sessions', user.accessToken)).status).toBe(200);

    await setActive(user, false);

    for (const call of everyProtectedRoute(user)) {
      const response = await call();
      expect(response.status).toBe(401);
      expect(response.json()).toEqual(errorBody(401, 'Cuenta desactivada.'));
      // Never the sessions, with their addresses and user agents.
      expect(response.text).not.toContain('userAgent');
    }
    // Refused, so revoke-all and revoke changed nothing.
    await expect(
      t.dataSource.getRepository(Session).countBy({ userId: user.id, endedAt: IsNull() }),
    ).resolves.toBe(1);
  });

  it('should let the same token through again once the account is active again', async () => {
    const user = await registerUser(t);
    await setActive(user, false);
    expect((await t.get(ME, user.accessToken)).status).toBe(401);

    await setActive(user, true);

    expect((await t.get(ME, user.accessToken)).status).toBe(200);
    expect((await t.get('/api/greetings/me', user.accessToken)).status).toBe(200);
  });

  it('should answer 404 "Usuario no encontrado." on every protected route once the account is deleted', async () => {
    const user = await registerUser(t);
    expect((await t.get(ME, user.accessToken)).status).toBe(200);

    await t.dataSource.getRepository(User).delete({ id: user.id });

    for (const call of everyProtectedRoute(user)) {
      const response = await call();
      expect(response.status).toBe(404);
      expect(response.json()).toEqual(errorBody(404, 'Usuario no encontrado.'));
    }
  });

  it('should still answer a bad token with the bare 401 before looking at any account', async () => {
    const response = await t.get('/api/greetings/me', 'a.b.c');

    expect(response.json()).toEqual(UNAUTHORIZED_BODY);
  });
});
