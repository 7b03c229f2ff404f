import { jwtKey } from '../src/common/jwt/jwt-key.js';
import { registerUser, type RegisteredUser } from './factories/user.factory.js';
import { createTestApp, TEST_SECRET_KEY, type TestApp } from './utils/create-test-app.js';
import { publicUser, UNAUTHORIZED_BODY } from './utils/expected-bodies.js';
import { accessTokenClaims, decodeJwt, signJwt } from './utils/jwt.js';
import { ME, REFRESH } from './utils/routes.js';
import { createTestDatabase, type TestDatabase } from './utils/test-database.js';

const NEW_SECRET = 'the-new-secret-after-rotation-0123456789abcdef';
const OLDEST_SECRET = 'an-even-older-secret-0123456789abcdef-0123';

/**
 * Rolling the signing secret: the new instance signs with the new secret and still accepts
 * tokens of the previous ones. Apps run one after another on one database, as an operator's
 * rolling restart would (Passport's strategy registry is process-wide, so two apps in one
 * test process must not overlap).
 */
describe('signing-key rotation', () => {
  let database: TestDatabase;
  let t: TestApp | undefined;

  const start = async (secret: string, previous?: string): Promise<TestApp> => {
    t = await createTestApp({
      database,
      environment: {
        Jwt__SecretKey: secret,
        ...(previous === undefined ? {} : { Jwt__PreviousSecretKeys: previous }),
      },
    });
    return t;
  };
  const stop = async (): Promise<void> => {
    await t?.close();
    t = undefined;
  };

  beforeEach(async () => {
    database = await createTestDatabase();
  });

  afterEach(async () => {
    await stop();
    await database.drop();
  });

  /** Registers on an app with `secret`, then stops it. */
  const userSignedWith = async (secret: string): Promise<RegisteredUser> => {
    const user = await registerUser(await start(secret));
    await stop();
    return user;
  };

  it("should put the signing secret's key id in the header of every access token", async () => {
    const app = await start(TEST_SECRET_KEY);
    const user = await registerUser(app);
    const refreshed = await app.post(REFRESH, { refreshToken: user.refreshToken });

    for (const token of [user.accessToken, refreshed.json<{ accessToken: string }>().accessToken]) {
      expect(decodeJwt(token).header).toEqual({
        alg: 'HS256',
        typ: 'JWT',
        kid: jwtKey(TEST_SECRET_KEY).kid,
      });
    }
  });

  it('should accept tokens of every previous secret after a rotation, and sign with the new one', async () => {
    const older = await userSignedWith(OLDEST_SECRET);
    const old = await userSignedWith(TEST_SECRET_KEY);

    const app = await start(NEW_SECRET, `${TEST_SECRET_KEY},${OLDEST_SECRET}`);

    for (const user of [older, old]) {
      const response = await app.get(ME, user.accessToken);
      expect(response.status).toBe(200);
      expect(response.json()).toEqual(publicUser(user));
    }
    const fresh = await registerUser(app);
    expect(decodeJwt(fresh.accessToken).header.kid).toBe(jwtKey(NEW_SECRET).kid);
  });

  it('should refuse tokens of a secret once it is no longer listed', async () => {
    const old = await userSignedWith(TEST_SECRET_KEY);

    const app = await start(NEW_SECRET);

    const response = await app.get(ME, old.accessToken);
    expect(response.status).toBe(401);
    expect(response.json()).toEqual(UNAUTHORIZED_BODY);
  });

  it('should refuse a token whose key id names a previous secret but is signed with another', async () => {
    const app = await start(NEW_SECRET, TEST_SECRET_KEY);
    const user = await registerUser(app);
    const claims = accessTokenClaims(user, app.clock.now());
    const header = { alg: 'HS256', typ: 'JWT', kid: jwtKey(TEST_SECRET_KEY).kid };

    const response = await app.get(ME, signJwt(header, claims, NEW_SECRET));

    expect(response.status).toBe(401);
    expect(response.json()).toEqual(UNAUTHORIZED_BODY);
  });

  it.each([
    ['an unknown key id', { kid: jwtKey(OLDEST_SECRET).kid }, 401],
    ['a key id that is not a string', { kid: 42 }, 401],
    ['no key id, signed with the current secret', {}, 200],
  ])('should answer a token with %s: %i', async (_label, extra, status) => {
    const app = await start(NEW_SECRET, TEST_SECRET_KEY);
    const user = await registerUser(app);
    const claims = accessTokenClaims(user, app.clock.now());

    const response = await app.get(
      ME,
      signJwt({ alg: 'HS256', typ: 'JWT', ...extra }, claims, NEW_SECRET),
    );

    expect(response.status).toBe(status);
  });
});
