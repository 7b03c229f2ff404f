import { Module } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { registerUser } from './factories/user.factory.js';
import { KeygateAuthModule } from './resource-server/keygate-auth.module.js';
import {
  isSessionActive,
  keygateVerifier,
  keyIdOf,
  type KeygateSettings,
} from './resource-server/keygate-verifier.js';
import { OrdersController } from './resource-server/orders.controller.js';
import { createTestApp, TEST_SECRET_KEY, useSharedTestApp } from './utils/create-test-app.js';
import { FakeClock } from './utils/fake-clock.js';
import { httpRequest } from './utils/http.js';
import { decodeJwt, encodeSegment, signJwt, withPayload } from './utils/jwt.js';
import { codeShownFor } from './utils/page-code.js';
import { useResourceServer } from './utils/resource-server.js';
import { REVOKE } from './utils/routes.js';

// docs/verifying-tokens.md: the code a team puts in its own API to accept Keygate's access
// tokens, with jose in plain Node.js and as a NestJS guard. Its files here are the page's code,
// run against tokens of the real service (whose clock is the real time, as jose's is).

const FILES = [
  'keygate-verifier.ts',
  'keygate-auth.guard.ts',
  'keygate-auth.module.ts',
  'orders.controller.ts',
];
const SETTINGS: KeygateSettings = {
  secrets: [TEST_SECRET_KEY],
  issuer: 'keygate',
  audience: 'keygate-clients',
};
const NEXT_SECRET = 'the-next-secret-of-keygate-0123456789-abcdefghijkl';
const HOUR_MS = 60 * 60 * 1000;

describe('Verifying Keygate access tokens in your own API', () => {
  const keygate = useSharedTestApp(() => ({ clock: new FakeClock(new Date()) }));

  it.each(FILES)('should be the code docs/verifying-tokens.md shows for keygate/%s', (file) => {
    expect(codeShownFor('docs/verifying-tokens.md', `keygate/${file}`)).toBe(
      readFileSync(new URL(`./resource-server/${file}`, import.meta.url), 'utf8'),
    );
  });

  describe('with jose', () => {
    const verify = keygateVerifier(SETTINGS);

    it('should accept a token of Keygate, and say whom and which session it is for', async () => {
      const user = await registerUser(keygate);

      const identity = await verify(user.accessToken);

      expect(identity).toEqual({
        userId: user.id,
        sessionId: decodeJwt(user.accessToken).payload.sid,
        email: user.email,
      });
      expect(identity?.sessionId).toEqual(expect.stringMatching(/^[0-9a-f-]{36}$/));
    });

    it.each([
      ['another issuer', { ...SETTINGS, issuer: 'someone-else' }],
      ['another audience', { ...SETTINGS, audience: 'another-api' }],
      ['another secret', { ...SETTINGS, secrets: [NEXT_SECRET] }],
    ])('should refuse a token of Keygate when the API expects %s', async (_label, settings) => {
      const user = await registerUser(keygate);

      await expect(keygateVerifier(settings)(user.accessToken)).resolves.toBeNull();
    });

    it.each([
      ['a changed payload', (token: string) => withPayload(token, { sub: 'someone-else' })],
      [
        'alg none',
        (token: string) => {
          const [, payload] = token.split('.');
          return `${encodeSegment({ alg: 'none', typ: 'JWT', kid: keyIdOf(TEST_SECRET_KEY) })}.${payload}.`;
        },
      ],
      [
        'HS512 with the right secret',
        (token: string) => {
          const { header, payload } = decodeJwt(token);
          return signJwt({ ...header, alg: 'HS512' }, payload, TEST_SECRET_KEY, 'HS512');
        },
      ],
      [
        'no kid',
        (token: string) => {
          const { payload } = decodeJwt(token);
          return signJwt({ alg: 'HS256', typ: 'JWT' }, payload, TEST_SECRET_KEY);
        },
      ],
      ['not a JWT', () => 'not-a-token'],
    ])('should refuse %s', async (_label, forge) => {
      const user = await registerUser(keygate);

      await expect(verify(forge(user.accessToken))).resolves.toBeNull();
    });

    it('should refuse an expired token', async () => {
      const past = await createTestApp({
        clock: new FakeClock(new Date(Date.now() - HOUR_MS)),
      });
      try {
        const user = await registerUser(past);

        await expect(verify(user.accessToken)).resolves.toBeNull();
      } finally {
        await past.close();
      }
    });

    it('should accept the tokens of the previous and the next secret during a rotation, by kid', async () => {
      const rotated = await createTestApp({
        clock: new FakeClock(new Date()),
        environment: { Jwt__SecretKey: NEXT_SECRET, Jwt__PreviousSecretKeys: TEST_SECRET_KEY },
      });
      try {
        const before = await registerUser(keygate);
        const after = await registerUser(rotated);
        const during = keygateVerifier({ ...SETTINGS, secrets: [NEXT_SECRET, TEST_SECRET_KEY] });
        const afterward = keygateVerifier({ ...SETTINGS, secrets: [NEXT_SECRET] });

        expect(decodeJwt(after.accessToken).header.kid).toBe(keyIdOf(NEXT_SECRET));
        await expect(during(before.accessToken)).resolves.toMatchObject({ userId: before.id });
        await expect(during(after.accessToken)).resolves.toMatchObject({ userId: after.id });
        await expect(afterward(before.accessToken)).resolves.toBeNull();
        await expect(afterward(after.accessToken)).resolves.toMatchObject({ userId: after.id });
      } finally {
        await rotated.close();
      }
    });
  });

  describe('asking Keygate whether the session is still active', () => {
    it('should be true until the session is logged out, with Jwt__RequireActiveSession=true', async () => {
      const checking = await createTestApp({
        clock: new FakeClock(new Date()),
        environment: { Jwt__RequireActiveSession: 'true' },
      });
      try {
        const user = await registerUser(checking);
        const active = await isSessionActive(checking.baseUrl, user.accessToken);
        const logout = await checking.post(
          REVOKE,
          { refreshToken: user.refreshToken },
          user.accessToken,
        );

        expect({ active, logout: logout.status }).toEqual({ active: true, logout: 200 });
        await expect(isSessionActive(checking.baseUrl, user.accessToken)).resolves.toBe(false);
        await expect(keygateVerifier(SETTINGS)(user.accessToken)).resolves.not.toBeNull();
      } finally {
        await checking.close();
      }
    });
  });

  describe('as a NestJS guard', () => {
    @Module({ imports: [KeygateAuthModule.forRoot(SETTINGS)], controllers: [OrdersController] })
    class ResourceServerModule {}

    const api = useResourceServer(() => ResourceServerModule);

    it('should serve a request with a token of Keygate, for its user', async () => {
      const user = await registerUser(keygate);

      const response = await httpRequest(api.url, '/orders', {
        headers: { authorization: `Bearer ${user.accessToken}` },
      });

      expect({ status: response.status, body: response.json() }).toEqual({
        status: 200,
        body: { userId: user.id, orders: [] },
      });
    });

    it.each<[string, (user: { accessToken: string; refreshToken: string }) => string | undefined]>([
      ['no token', () => undefined],
      ['a refresh token', (user) => `Bearer ${user.refreshToken}`],
      ['another scheme', (user) => `Basic ${user.accessToken}`],
    ])('should refuse a request with %s', async (_label, authorizationOf) => {
      const authorization = authorizationOf(await registerUser(keygate));

      const response = await httpRequest(api.url, '/orders', {
        headers: authorization === undefined ? {} : { authorization },
      });

      expect(response.status).toBe(401);
    });
  });
});
