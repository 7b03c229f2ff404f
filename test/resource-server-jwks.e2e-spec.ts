import { Module } from '@nestjs/common';
import { customFetch, jwksCache, SignJWT, type JSONWebKeySet } from 'jose';
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { KeysService } from '../src/keys/keys.service.js';
import { registerUser, type RegisteredUser } from './factories/user.factory.js';
import { KeygateJwksAuthModule } from './resource-server/keygate-jwks-auth.module.js';
import {
  keygateJwksVerifier,
  keygatePinnedVerifier,
} from './resource-server/keygate-jwks-verifier.js';
import { OrdersController } from './resource-server/orders.controller.js';
import {
  TEST_SECRET_KEY,
  useSharedTestApp,
  useTestApp,
  type TestApp,
} from './utils/create-test-app.js';
import { FakeClock } from './utils/fake-clock.js';
import { httpRequest } from './utils/http.js';
import { accessTokenClaims, decodeJwt, signJwt } from './utils/jwt.js';
import { codeShownFor } from './utils/page-code.js';
import { originAt } from './utils/origin.js';
import { useResourceServer } from './utils/resource-server.js';
import { JWKS } from './utils/routes.js';
import { asymmetricSigning } from './utils/signing-keys.js';

// docs/verifying-tokens.md, with the JWKS: the code a team puts in its API to accept tokens of a
// Keygate that signs with keys, verified by clients no one here wrote (jose, PyJWT from Debian's
// python3-jwt), against tokens of the real service. Their clocks are the real time: Keygate's
// starts ten minutes back, so its tokens stay valid however far a rotation moves it.

const FILES = ['keygate-jwks-verifier.ts', 'keygate-jwks-auth.module.ts', 'keygate_verifier.py'];
const SETTINGS = { issuer: 'keygate', audience: 'keygate-clients' };
const LEAD_MS = (300 + 30) * 1000;
const TEN_MINUTES_MS = 10 * 60 * 1000;
/** Debian's interpreter, with Debian's python3-jwt (installed by .ci/run). */
const PYTHON = '/usr/bin/python3';
const PYTHON_GLUE = fileURLToPath(
  new URL('./resource-server/run_python_verifier.py', import.meta.url),
);

const past = (): FakeClock => new FakeClock(new Date(Date.now() - TEN_MINUTES_MS));
const jwksUrl = (t: TestApp): URL => new URL(JWKS, t.baseUrl);
const subOf = (user: RegisteredUser): string => user.id;

async function jwksOf(t: TestApp): Promise<JSONWebKeySet> {
  return (await t.get(JWKS)).json<JSONWebKeySet>();
}

/** A token like Keygate's, under a kid Keygate never published, signed by someone else's key. */
function forgedToken(user: RegisteredUser, t: TestApp): Promise<string> {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return new SignJWT(accessTokenClaims(user, t.clock.now()))
    .setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid: 'not-a-kid-of-keygate' })
    .sign(privateKey);
}

/** Runs the Python verifier on `tokens` (asynchronously: the app must answer its requests). */
function verifyInPython(request: Record<string, unknown>): Promise<(string | null)[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [PYTHON_GLUE], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) {
        resolve(JSON.parse(stdout) as (string | null)[]);
      } else {
        reject(new Error(`python exited with ${String(code)}: ${stderr}`));
      }
    });
    child.stdin.end(JSON.stringify(request));
  });
}

describe('Verifying Keygate access tokens with the JWKS', () => {
  it.each(FILES)('should be the code docs/verifying-tokens.md shows for keygate/%s', (file) => {
    const language = file.endsWith('.py') ? 'python' : 'ts';
    expect(codeShownFor('docs/verifying-tokens.md', `keygate/${file}`, language)).toBe(
      readFileSync(new URL(`./resource-server/${file}`, import.meta.url), 'utf8'),
    );
  });

  describe.each(['ES256', 'EdDSA', 'RS256'])('signed with %s', (algorithm) => {
    const t = useSharedTestApp(() => ({
      clock: past(),
      environment: asymmetricSigning(algorithm),
    }));

    it('should verify with jose from the URL alone, and refuse what Keygate did not sign', async () => {
      const user = await registerUser(t);
      const verify = keygateJwksVerifier({ ...SETTINGS, jwksUrl: jwksUrl(t) });

      await expect(verify(user.accessToken)).resolves.toEqual({
        userId: user.id,
        sessionId: decodeJwt(user.accessToken).payload.sid,
        email: user.email.toLowerCase(),
      });
      await expect(verify(await forgedToken(user, t))).resolves.toBeNull();
      await expect(
        verify(
          signJwt(
            { alg: 'HS256', typ: 'JWT', kid: decodeJwt(user.accessToken).header.kid },
            accessTokenClaims(user, t.clock.now()),
            TEST_SECRET_KEY,
          ),
        ),
      ).resolves.toBeNull();
    });

    it('should verify with PyJWT’s PyJWKClient from the URL alone', async () => {
      const user = await registerUser(t);

      const results = await verifyInPython({
        jwksUrl: jwksUrl(t).href,
        algorithm,
        tokens: [user.accessToken, await forgedToken(user, t), `${user.accessToken}x`],
      });

      expect(results).toEqual([subOf(user), null, null]);
    });

    it('should verify offline from a pinned copy of the key set, in Node and in Python', async () => {
      const user = await registerUser(t);
      const pinned = await jwksOf(t);

      await expect(
        keygatePinnedVerifier(pinned, SETTINGS)(user.accessToken),
      ).resolves.toMatchObject({ userId: user.id });
      await expect(
        keygatePinnedVerifier({ keys: [] }, SETTINGS)(user.accessToken),
      ).resolves.toBeNull();
      await expect(
        verifyInPython({
          pinned,
          algorithm,
          tokens: [user.accessToken, await forgedToken(user, t)],
        }),
      ).resolves.toEqual([subOf(user), null]);
    });
  });

  describe('through a rotation', () => {
    const t = useTestApp(() => ({ clock: past(), environment: asymmetricSigning('ES256') }));

    it('should keep old and new tokens verifying in jose, fetching the new kid once per cooldown', async () => {
      const before = await registerUser(t);
      const fetched: string[] = [];
      // The resource server fetched the set (the old key alone) 31 s ago: fresh, not cooling down.
      const verify = keygateJwksVerifier(
        { ...SETTINGS, jwksUrl: jwksUrl(t) },
        {
          [jwksCache]: { uat: Date.now() - 31_000, jwks: await jwksOf(t) },
          [customFetch]: (url: string, init: RequestInit) => {
            fetched.push(url);
            return fetch(url, init);
          },
        },
      );
      await expect(verify(before.accessToken)).resolves.toMatchObject({ userId: before.id });

      await t.app.get(KeysService).rotate(originAt('203.0.113.9'));
      t.clock.advance(LEAD_MS);
      const after = await Promise.all([1, 2, 3, 4, 5].map(() => registerUser(t)));
      expect(new Set(after.map((user) => decodeJwt(user.accessToken).header.kid)).size).toBe(1);
      expect(decodeJwt(after[0].accessToken).header.kid).not.toBe(
        decodeJwt(before.accessToken).header.kid,
      );

      const verified = await Promise.all(after.map((user) => verify(user.accessToken)));
      const unknown = await Promise.all(
        after.map(async (user) => verify(await forgedToken(user, t))),
      );

      expect(verified.map((identity) => identity?.userId)).toEqual(after.map((user) => user.id));
      await expect(verify(before.accessToken)).resolves.toMatchObject({ userId: before.id });
      expect(unknown).toEqual([null, null, null, null, null]);
      expect(fetched).toEqual([jwksUrl(t).href]);
    });

    it('should keep old and new tokens verifying in PyJWT across the rotation', async () => {
      const before = await registerUser(t);
      const pythonBefore = await verifyInPython({
        jwksUrl: jwksUrl(t).href,
        algorithm: 'ES256',
        tokens: [before.accessToken],
      });

      await t.app.get(KeysService).rotate(originAt('203.0.113.9'));
      t.clock.advance(LEAD_MS);
      const after = await registerUser(t);

      expect(pythonBefore).toEqual([before.id]);
      await expect(
        verifyInPython({
          jwksUrl: jwksUrl(t).href,
          algorithm: 'ES256',
          tokens: [before.accessToken, after.accessToken],
        }),
      ).resolves.toEqual([before.id, after.id]);
    });
  });

  describe('as a NestJS guard', () => {
    const t = useSharedTestApp(() => ({ clock: past(), environment: asymmetricSigning('EdDSA') }));
    const api = useResourceServer(() => {
      @Module({
        imports: [KeygateJwksAuthModule.forRoot({ ...SETTINGS, jwksUrl: jwksUrl(t) })],
        controllers: [OrdersController],
      })
      class ResourceServerModule {}
      return ResourceServerModule;
    });

    it('should serve a request with a token of Keygate, and refuse a forged one', async () => {
      const user = await registerUser(t);
      const orders = (token: string) =>
        httpRequest(api.url, '/orders', { headers: { authorization: `Bearer ${token}` } });

      const served = await orders(user.accessToken);
      const refused = await orders(await forgedToken(user, t));

      expect({ status: served.status, body: served.json() }).toEqual({
        status: 200,
        body: { userId: user.id, orders: [] },
      });
      expect(refused.status).toBe(401);
    });
  });
});
