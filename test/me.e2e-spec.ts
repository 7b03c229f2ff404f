import { User } from '../src/users/entities/user.entity.js';
import { registerUser, type RegisteredUser } from './factories/user.factory.js';
import {
  TEST_SECRET_KEY,
  type TestApp,
  type TestResponse,
  useTestApp,
} from './utils/create-test-app.js';
import { errorBody, publicUser, UNAUTHORIZED_BODY } from './utils/expected-bodies.js';
import { accessTokenClaims, signJwt, unsignedJwt, withPayload } from './utils/jwt.js';
import { ME } from './utils/routes.js';

const MINUTE_MS = 60 * 1000;
const OTHER_SECRET = 'another-secret-that-is-long-enough-0123456789abcdef';
const HS256_HEADER = { alg: 'HS256', typ: 'JWT' };

/** Claims like the service's own, valid now, with the default issuer and audience. */
function claimsFor(t: TestApp, user: RegisteredUser): Record<string, unknown> {
  return accessTokenClaims(user, t.clock.now());
}

function getMe(t: TestApp, authorization: string | undefined): Promise<TestResponse> {
  return t.request(ME, { headers: authorization === undefined ? {} : { authorization } });
}

function expectUnauthorized(response: TestResponse): void {
  expect(response.status).toBe(401);
  const body = response.json();
  expect(body).toEqual(UNAUTHORIZED_BODY);
  expect(body).not.toHaveProperty('timestamp');
}

describe('GET /api/auth/me', () => {
  const t = useTestApp();

  it('should answer 200 with exactly the public user of the access token', async () => {
    const createdAt = t.clock.now();
    const user = await registerUser(t);
    await registerUser(t);
    t.clock.advance(MINUTE_MS);

    const response = await t.get(ME, user.accessToken);

    expect(response.status).toBe(200);
    const body = response.json();
    expect(body).toEqual(publicUser(user));
    expect(body).toStrictEqual({
      id: user.id,
      username: user.username,
      email: user.email,
      createdAt: createdAt.toISOString(),
    });
  });

  it('should accept a token signed with the configured secret, issuer and audience', async () => {
    // The control for the forged tokens below: they differ from this one in one respect only.
    const user = await registerUser(t);
    const token = signJwt(HS256_HEADER, claimsFor(t, user), TEST_SECRET_KEY);

    const response = await getMe(t, `Bearer ${token}`);

    expect(response.status).toBe(200);
    expect(response.json()).toEqual(publicUser(user));
  });

  const UNAUTHORIZED_CASES: ReadonlyArray<
    readonly [string, (t: TestApp, user: RegisteredUser) => string | undefined]
  > = [
    ['no Authorization header', () => undefined],
    ['a garbage token', () => 'Bearer garbage'],
    ['a garbage token of three segments', () => 'Bearer abc.def.ghi'],
    ['an empty bearer', () => 'Bearer '],
    ['the token without the Bearer scheme', (_t, user) => user.accessToken],
    ['the token under another scheme', (_t, user) => `Basic ${user.accessToken}`],
    [
      'a token signed with another secret',
      (t, user) => `Bearer ${signJwt(HS256_HEADER, claimsFor(t, user), OTHER_SECRET)}`,
    ],
    [
      'an issued token whose payload was altered',
      (t, user) =>
        `Bearer ${withPayload(user.accessToken, { ...claimsFor(t, user), email: 'someone@example.com' })}`,
    ],
    ['an unsigned token (alg none)', (t, user) => `Bearer ${unsignedJwt(claimsFor(t, user))}`],
    [
      'a token from another issuer',
      (t, user) =>
        `Bearer ${signJwt(HS256_HEADER, { ...claimsFor(t, user), iss: 'someone-else' }, TEST_SECRET_KEY)}`,
    ],
    [
      'a token for another audience',
      (t, user) =>
        `Bearer ${signJwt(HS256_HEADER, { ...claimsFor(t, user), aud: 'other-clients' }, TEST_SECRET_KEY)}`,
    ],
    ['a refresh token', (_t, user) => `Bearer ${user.refreshToken}`],
  ];

  it.each(UNAUTHORIZED_CASES)(
    'should answer 401 Unauthorized without timestamp for %s',
    async (_name, authorization) => {
      const user = await registerUser(t);

      const response = await getMe(t, authorization(t, user));

      expectUnauthorized(response);
    },
  );

  it('should still accept the access token 1 second before its 15 minutes have passed', async () => {
    const user = await registerUser(t);
    t.clock.advance(15 * MINUTE_MS - 1000);

    const response = await t.get(ME, user.accessToken);

    expect(response.status).toBe(200);
    expect(response.json()).toEqual(publicUser(user));
  });

  it('should answer 401 Unauthorized once the access token is past its 15 minutes', async () => {
    const user = await registerUser(t);
    t.clock.advance(15 * MINUTE_MS + 1000);

    const response = await t.get(ME, user.accessToken);

    expectUnauthorized(response);
  });

  it('should refuse a token it accepted before once the token has expired', async () => {
    const user = await registerUser(t);
    expect((await t.get(ME, user.accessToken)).status).toBe(200);
    t.clock.advance(15 * MINUTE_MS - 1000);
    expect((await t.get(ME, user.accessToken)).status).toBe(200);
    t.clock.advance(2000);

    const response = await t.get(ME, user.accessToken);

    expectUnauthorized(response);
  });

  it('should accept a remembered token again after refusing a forged copy of it', async () => {
    const user = await registerUser(t);
    expect((await t.get(ME, user.accessToken)).status).toBe(200);
    const [header, payload] = user.accessToken.split('.');
    const forged = `${header}.${payload}.${'A'.repeat(43)}`;

    expectUnauthorized(await getMe(t, `Bearer ${forged}`));
    expect((await t.get(ME, user.accessToken)).status).toBe(200);
  });

  it('should answer 404 `Usuario no encontrado.` when the user no longer exists', async () => {
    const user = await registerUser(t);
    await t.dataSource.getRepository(User).delete({ id: user.id });

    const response = await t.get(ME, user.accessToken);

    expect(response.status).toBe(404);
    expect(response.json()).toEqual(errorBody(404, 'Usuario no encontrado.'));
  });

  it('should answer 401 `Cuenta desactivada.` when the user is deactivated', async () => {
    const user = await registerUser(t);
    await t.dataSource.getRepository(User).update({ id: user.id }, { isActive: false });

    const response = await t.get(ME, user.accessToken);

    expect(response.status).toBe(401);
    expect(response.json()).toEqual(errorBody(401, 'Cuenta desactivada.'));
  });

  it('should never write an access or refresh token to the log', async () => {
    const user = await registerUser(t);
    const forged = signJwt(HS256_HEADER, claimsFor(t, user), OTHER_SECRET);
    expect((await t.get(ME, user.accessToken)).status).toBe(200);
    expect((await getMe(t, `Bearer ${forged}`)).status).toBe(401);
    expect((await getMe(t, `Bearer ${user.refreshToken}`)).status).toBe(401);
    const deleted = await registerUser(t);
    await t.dataSource.getRepository(User).delete({ id: deleted.id });
    expect((await t.get(ME, deleted.accessToken)).status).toBe(404);
    t.clock.advance(16 * MINUTE_MS);
    expect((await t.get(ME, user.accessToken)).status).toBe(401);

    const log = t.logger.allText();

    expect(t.logger.entries.length).toBeGreaterThan(0);
    for (const token of [user.accessToken, deleted.accessToken, forged]) {
      expect(log).not.toContain(token);
      expect(log).not.toContain(token.split('.')[2]);
    }
    for (const token of [user.refreshToken, deleted.refreshToken]) {
      expect(log).not.toContain(token);
    }
  });
});
