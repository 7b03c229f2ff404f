import { generateKeyPairSync, sign } from 'node:crypto';
import { User } from '../src/users/entities/user.entity.js';
import { DEFAULT_PASSWORD, registerUser, reloadUser } from './factories/user.factory.js';
import {
  createTestApp,
  TEST_HASH_ITERATIONS,
  TEST_SECRET_KEY,
  useSharedTestApp,
} from './utils/create-test-app.js';
import { UNAUTHORIZED_BODY } from './utils/expected-bodies.js';
import { accessTokenClaims, encodeSegment, signJwt } from './utils/jwt.js';
import { LOGIN, ME, REGISTER } from './utils/routes.js';
import { createTestDatabase } from './utils/test-database.js';

describe('hardening', () => {
  describe('access-token algorithms', () => {
    const t = useSharedTestApp();

    it('should refuse an RS256 token, even one whose claims are right', async () => {
      const user = await registerUser(t);
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const signingInput = `${encodeSegment({ alg: 'RS256', typ: 'JWT' })}.${encodeSegment(
        accessTokenClaims(user, t.clock.now()),
      )}`;
      const signature = sign('sha256', Buffer.from(signingInput), privateKey).toString('base64url');

      const response = await t.get(ME, `${signingInput}.${signature}`);

      expect(response.status).toBe(401);
      expect(response.json()).toEqual(UNAUTHORIZED_BODY);
    });

    it('should refuse a token whose header names RS256 but which is HMAC-signed with the secret', async () => {
      const user = await registerUser(t);
      const token = signJwt(
        { alg: 'RS256', typ: 'JWT' },
        accessTokenClaims(user, t.clock.now()),
        TEST_SECRET_KEY,
      );

      const response = await t.get(ME, token);

      expect(response.json()).toEqual(UNAUTHORIZED_BODY);
    });
  });

  describe('clock tolerance (Jwt__ClockSkewSeconds)', () => {
    it.each([
      ['0', 0, 401],
      ['30', 29, 200],
      ['30', 30, 401],
    ])(
      'with a tolerance of %s s, a token %i s past exp should answer %i',
      async (skew, late, status) => {
        const t = await createTestApp({ environment: { Jwt__ClockSkewSeconds: skew } });
        try {
          const user = await registerUser(t);
          t.clock.advance(15 * 60 * 1000 + late * 1000);

          const response = await t.get(ME, user.accessToken);

          expect(response.status).toBe(status);
        } finally {
          await t.close();
        }
      },
    );
  });

  describe('e-mail normalisation', () => {
    const t = useSharedTestApp();

    it('should store a decomposed e-mail in NFC and let its composed form log in', async () => {
      const decomposed = 'Jose\u0301@Example.com';
      const composed = 'josé@example.com';
      const registered = await t.post(REGISTER, {
        username: 'jose',
        email: decomposed,
        password: DEFAULT_PASSWORD,
      });
      expect(registered.status).toBe(201);
      expect(registered.json<{ user: { email: string } }>().user.email).toBe(composed);

      const login = await t.post(LOGIN, {
        email: composed,
        password: DEFAULT_PASSWORD,
      });
      expect(login.status).toBe(200);
      const again = await t.post(REGISTER, {
        username: 'jose2',
        email: 'JOSÉ@example.com',
        password: DEFAULT_PASSWORD,
      });
      expect(again.status).toBe(409);
    });
  });

  describe('password hash upgrades', () => {
    it('should re-hash a password stored with fewer iterations at the next successful login', async () => {
      const database = await createTestDatabase();
      const weak = await createTestApp({
        database,
        environment: { PasswordHashing__Iterations: '1000' },
      });
      const user = await registerUser(weak);
      await weak.close();

      const stronger = await createTestApp({
        database,
        environment: { PasswordHashing__Iterations: String(TEST_HASH_ITERATIONS * 2) },
      });
      try {
        const before = (await reloadUser(stronger, user.id)).passwordHash;
        expect(before.split('$')[1]).toBe('1000');

        const wrong = await stronger.post(LOGIN, {
          email: user.email,
          password: 'Wrong!pass1',
        });
        expect(wrong.status).toBe(401);
        expect((await reloadUser(stronger, user.id)).passwordHash).toBe(before);

        const login = await stronger.post(LOGIN, {
          email: user.email,
          password: user.password,
        });
        expect(login.status).toBe(200);
        const after = await stronger.dataSource
          .getRepository(User)
          .findOneByOrFail({ id: user.id });
        expect(after.passwordHash.split('$')[1]).toBe(String(TEST_HASH_ITERATIONS * 2));
        expect(after.passwordHash).not.toBe(before);

        const again = await stronger.post(LOGIN, {
          email: user.email,
          password: user.password,
        });
        expect(again.status).toBe(200);
      } finally {
        await stronger.close();
        await database.drop();
      }
    });
  });
});
