import { createLocalJWKSet, exportJWK, exportSPKI, jwtVerify, SignJWT } from 'jose';
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { jwtKey } from '../src/common/jwt/jwt-key.js';
import { KeySet } from '../src/keys/key-set.js';
import { KeysService } from '../src/keys/keys.service.js';
import { registerUser, type RegisteredUser } from './factories/user.factory.js';
import { auditRows } from './utils/audit-rows.js';
import {
  createTestApp,
  TEST_SECRET_KEY,
  useSharedTestApp,
  useTestApp,
  type TestApp,
} from './utils/create-test-app.js';
import { publicUser, UNAUTHORIZED_BODY } from './utils/expected-bodies.js';
import { accessTokenClaims, decodeJwt, encodeSegment, signJwt } from './utils/jwt.js';
import { originAt } from './utils/origin.js';
import { JWKS, ME, REFRESH } from './utils/routes.js';
import { httpRequest } from './utils/http.js';
import { Exposition } from './utils/prometheus-text.js';
import { ManagementServer } from '../src/metrics/management-server.js';
import { asymmetricSigning } from './utils/signing-keys.js';
import { createTestDatabase, type TestDatabase } from './utils/test-database.js';

const ALGORITHMS = ['ES256', 'EdDSA', 'RS256'] as const;
/** Keys__JwksMaxAgeSeconds + Keys__RefreshIntervalSeconds by default: a next key's lead. */
const LEAD_MS = (300 + 30) * 1000;
const TOKEN_LIFETIME_MS = 15 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;
const ORIGIN = originAt('203.0.113.9');
/** The key members a published JWK has, by key type (RFC 7518 §6), besides kty, kid, alg, use. */
const KEY_MEMBERS: Record<string, readonly string[]> = {
  ES256: ['crv', 'x', 'y'],
  EdDSA: ['crv', 'x'],
  RS256: ['e', 'n'],
};

function asymmetric(algorithm: string, extra: Record<string, string> = {}) {
  return { environment: asymmetricSigning(algorithm, extra) };
}

interface Jwks {
  readonly keys: Record<string, unknown>[];
}

async function jwksOf(t: TestApp): Promise<Jwks> {
  const response = await t.get(JWKS);
  expect(response.status).toBe(200);
  return response.json<Jwks>();
}

async function meStatus(t: TestApp, token: string): Promise<number> {
  return (await t.get(ME, token)).status;
}

async function expectRefused(t: TestApp, token: string): Promise<void> {
  const response = await t.get(ME, token);
  expect({ status: response.status, body: response.json() }).toEqual({
    status: 401,
    body: UNAUTHORIZED_BODY,
  });
}

const kidOf = (token: string): unknown => decodeJwt(token).header.kid;

/** The key-age gauge as the management listener serves it; undefined without a sample. */
async function keyAgeSeconds(t: TestApp, algorithm = 'ES256'): Promise<number | undefined> {
  const address = t.app.get(ManagementServer).address;
  if (address === null) {
    throw new Error('the management listener is not listening');
  }
  const response = await httpRequest(`http://${address.address}:${address.port}`, '/metrics');
  return new Exposition(response.text).get('keygate_signing_key_age_seconds', { algorithm });
}

describe('Asymmetric signing keys', () => {
  describe.each(ALGORITHMS)('with Jwt__SigningAlgorithm=%s', (algorithm) => {
    const t = useSharedTestApp(asymmetric(algorithm));

    it('should sign every access token with the current key, named by its kid, and publish only its public members', async () => {
      const user = await registerUser(t);
      const refreshed = await t.post(REFRESH, { refreshToken: user.refreshToken });
      const tokens = [user.accessToken, refreshed.json<{ accessToken: string }>().accessToken];

      const { keys } = await jwksOf(t);

      expect(keys).toHaveLength(1);
      const [published] = keys;
      expect(Object.keys(published).sort()).toEqual(
        ['alg', 'kid', 'kty', 'use', ...KEY_MEMBERS[algorithm]].sort(),
      );
      expect(published).toMatchObject({ alg: algorithm, use: 'sig' });
      expect(published.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
      for (const token of tokens) {
        expect(decodeJwt(token).header).toEqual({ alg: algorithm, typ: 'JWT', kid: published.kid });
        expect(await meStatus(t, token)).toBe(200);
      }
    });

    it('should issue tokens that a verifier holding only the JWKS accepts', async () => {
      const user = await registerUser(t);
      const keySet = createLocalJWKSet(await jwksOf(t));

      const { payload, protectedHeader } = await jwtVerify(user.accessToken, keySet, {
        issuer: 'keygate',
        audience: 'keygate-clients',
        algorithms: [algorithm],
        currentDate: t.clock.now(),
      });

      expect(protectedHeader.alg).toBe(algorithm);
      expect(payload).toMatchObject({ sub: user.id, email: user.email.toLowerCase() });
      const me = await t.get(ME, user.accessToken);
      expect(me.json()).toEqual(publicUser(user));
    });

    it('should keep the private key sealed in the table, never in the clear', async () => {
      const rows = await t.database.query<{ privateKey: string; publicKey: string }>(
        'SELECT "privateKey", "publicKey" FROM "signing_keys"',
      );

      expect(rows).toHaveLength(1);
      expect(rows[0].privateKey).toMatch(
        /^v1\.[0-9a-f]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/,
      );
      expect(rows[0].privateKey).not.toContain('PRIVATE KEY');
      expect(JSON.parse(rows[0].publicKey)).not.toHaveProperty('d');
    });
  });

  describe('under the HS256 default', () => {
    const t = useSharedTestApp();

    it('should publish an empty key set, cacheable and readable from any origin', async () => {
      const response = await t.request(JWKS, { headers: { origin: 'https://elsewhere.example' } });

      expect(response.status).toBe(200);
      expect(response.json()).toEqual({ keys: [] });
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('public, max-age=300');
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(response.headers.get('pragma')).toBeNull();
    });

    it('should report no key age while the secret signs', async () => {
      expect(await keyAgeSeconds(t)).toBeUndefined();
    });

    it('should serve the JWKS outside the /api prefix only', async () => {
      expect((await t.get(`/api${JWKS}`)).status).toBe(404);
    });

    it('should sign with the secret exactly as before', async () => {
      const user = await registerUser(t);

      expect(decodeJwt(user.accessToken).header).toEqual({
        alg: 'HS256',
        typ: 'JWT',
        kid: jwtKey(TEST_SECRET_KEY).kid,
      });
    });
  });

  describe('refusals', () => {
    const t = useSharedTestApp(asymmetric('ES256', { Jwt__PreviousSecretKeys: 'x'.repeat(40) }));

    const signer = (): { kid: string; privateKey: KeyObject } => {
      const current = t.app.get(KeySet).signer();
      if (current === null) {
        throw new Error('no current key');
      }
      return current;
    };
    const publicKey = (): KeyObject => createPublicKey(signer().privateKey);
    const sign = (
      header: Record<string, unknown>,
      claims: Record<string, unknown>,
      key: KeyObject = signer().privateKey,
    ): Promise<string> =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid: signer().kid, ...header })
        .sign(key);
    const attacker = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;

    it('should accept a token signed the way Keygate signs it (the rows below differ from it in one thing)', async () => {
      const user = await registerUser(t);

      expect(await meStatus(t, await sign({}, accessTokenClaims(user, t.clock.now())))).toBe(200);
    });

    const cases: [string, (user: RegisteredUser) => Promise<string>][] = [
      [
        'HS256 signed with the public key (PEM) as the secret: key confusion',
        async (user) =>
          signJwt(
            { alg: 'HS256', typ: 'JWT', kid: signer().kid },
            accessTokenClaims(user, t.clock.now()),
            await exportSPKI(publicKey()),
          ),
      ],
      [
        'HS256 signed with the public key (JWK) as the secret: key confusion',
        async (user) =>
          signJwt(
            { alg: 'HS256', typ: 'JWT', kid: signer().kid },
            accessTokenClaims(user, t.clock.now()),
            JSON.stringify(await exportJWK(publicKey())),
          ),
      ],
      [
        'an alg other than its key’s (ES256 under the kid of the HS256 secret)',
        (user) =>
          sign({ kid: jwtKey(TEST_SECRET_KEY).kid }, accessTokenClaims(user, t.clock.now())),
      ],
      [
        'an alg other than its key’s (HS256 with the right secret under the kid of the ES256 key)',
        (user) =>
          Promise.resolve(
            signJwt(
              { alg: 'HS256', typ: 'JWT', kid: signer().kid },
              accessTokenClaims(user, t.clock.now()),
              TEST_SECRET_KEY,
            ),
          ),
      ],
      [
        'alg none under the kid of the ES256 key',
        (user) =>
          Promise.resolve(
            `${encodeSegment({ alg: 'none', typ: 'JWT', kid: signer().kid })}.${encodeSegment(
              accessTokenClaims(user, t.clock.now()),
            )}.`,
          ),
      ],
      [
        'a jku header',
        (user) =>
          sign(
            { jku: 'https://attacker.example/jwks.json' },
            accessTokenClaims(user, t.clock.now()),
          ),
      ],
      [
        'a jwk header (its own key)',
        async (user) =>
          sign(
            { jwk: await exportJWK(createPublicKey(attacker)) },
            accessTokenClaims(user, t.clock.now()),
            attacker,
          ),
      ],
      [
        'a jwk header (Keygate’s own key)',
        async (user) =>
          sign({ jwk: await exportJWK(publicKey()) }, accessTokenClaims(user, t.clock.now())),
      ],
      [
        'an x5u header',
        (user) =>
          sign(
            { x5u: 'https://attacker.example/cert.pem' },
            accessTokenClaims(user, t.clock.now()),
          ),
      ],
      [
        'an x5c header',
        (user) => sign({ x5c: ['MIIBszCCAVmgAwIBAgIU'] }, accessTokenClaims(user, t.clock.now())),
      ],
      [
        'an unknown kid',
        (user) => sign({ kid: 'unknown-key' }, accessTokenClaims(user, t.clock.now())),
      ],
      [
        'the kid of Keygate’s key, signed by another key',
        (user) => sign({}, accessTokenClaims(user, t.clock.now()), attacker),
      ],
      [
        'a kid that is not a string',
        (user) => sign({ kid: 7 }, accessTokenClaims(user, t.clock.now())),
      ],
      [
        'a typ other than JWT',
        (user) => sign({ typ: 'at+jwt' }, accessTokenClaims(user, t.clock.now())),
      ],
      [
        'another audience',
        (user) => sign({}, accessTokenClaims(user, t.clock.now(), { aud: 'another-api' })),
      ],
      [
        'an expiry in the past',
        (user) =>
          sign(
            {},
            accessTokenClaims(user, new Date(t.clock.now().getTime() - TOKEN_LIFETIME_MS - 1000)),
          ),
      ],
    ];

    it.each(cases)('should refuse a token with %s: 401 Unauthorized', async (_label, forge) => {
      const user = await registerUser(t);

      await expectRefused(t, await forge(user));
    });
  });

  describe('rotation', () => {
    const t = useTestApp(asymmetric('ES256'));
    const keys = (): KeysService => t.app.get(KeysService);

    it('should publish a next key one lead before it signs, keep the old one for a token lifetime, and log no one out', async () => {
      const before = await registerUser(t);
      const oldKid = kidOf(before.accessToken);

      const next = await keys().rotate(ORIGIN);

      expect(next).toMatchObject({ state: 'next', algorithm: 'ES256', source: 'generated' });
      expect(new Date(next.activatesAt ?? '').getTime() - t.clock.now().getTime()).toBe(LEAD_MS);
      expect((await jwksOf(t)).keys.map((key) => key.kid).sort()).toEqual(
        [oldKid, next.kid].sort(),
      );
      expect(kidOf((await registerUser(t)).accessToken)).toBe(oldKid);

      t.clock.advance(LEAD_MS);
      const after = await registerUser(t);

      expect(kidOf(after.accessToken)).toBe(next.kid);
      expect(await meStatus(t, before.accessToken)).toBe(200);
      const refreshed = await t.post(REFRESH, { refreshToken: before.refreshToken });
      expect(kidOf(refreshed.json<{ accessToken: string }>().accessToken)).toBe(next.kid);
      expect((await keys().list()).map(({ kid, state }) => ({ kid, state }))).toEqual([
        { kid: next.kid, state: 'current' },
        { kid: oldKid, state: 'previous' },
        { kid: jwtKey(TEST_SECRET_KEY).kid, state: 'previous' },
      ]);

      t.clock.advance(TOKEN_LIFETIME_MS);

      expect((await jwksOf(t)).keys.map((key) => key.kid)).toEqual([next.kid]);
      expect((await keys().list())[1]).toMatchObject({ kid: oldKid, state: 'retired' });
    });

    it('should report the age of the key that signs, from when it was made', async () => {
      expect(await keyAgeSeconds(t)).toBe(0);

      t.clock.advance(3_600_000);
      expect(await keyAgeSeconds(t)).toBe(3_600);

      const next = await keys().rotate(ORIGIN);
      t.clock.advance(LEAD_MS);
      expect(kidOf((await registerUser(t)).accessToken)).toBe(next.kid);
      expect(await keyAgeSeconds(t)).toBe(LEAD_MS / 1000);
    });

    it('should refuse a second rotation while a next key waits', async () => {
      await keys().rotate(ORIGIN);

      await expect(keys().rotate(ORIGIN)).rejects.toThrow(
        'Ya hay una clave de firma siguiente publicada.',
      );
    });

    it('should retire a leaked current key at once: its tokens stop working, a new key signs', async () => {
      const user = await registerUser(t);
      const leaked = kidOf(user.accessToken) as string;
      expect(await meStatus(t, user.accessToken)).toBe(200);

      const retired = await keys().retire(leaked, ORIGIN);

      expect(retired).toMatchObject({ kid: leaked, state: 'retired' });
      await expectRefused(t, user.accessToken);
      const fresh = await registerUser(t);
      expect(kidOf(fresh.accessToken)).not.toBe(leaked);
      expect(await meStatus(t, fresh.accessToken)).toBe(200);
      expect((await jwksOf(t)).keys.map((key) => key.kid)).toEqual([kidOf(fresh.accessToken)]);
      const refreshed = await t.post(REFRESH, { refreshToken: user.refreshToken });
      expect(refreshed.status).toBe(200);
    });

    it('should record every change of the key set in the audit trail, without key material', async () => {
      const user = await registerUser(t);
      const first = kidOf(user.accessToken);
      const next = await keys().rotate(ORIGIN);
      await keys().retire(first as string, ORIGIN);

      const rows = (await auditRows(t.database)).filter((row) =>
        row.type.startsWith('signing_key'),
      );

      expect(rows.map(({ type, userId, ip, details }) => ({ type, userId, ip, details }))).toEqual([
        {
          type: 'signing_key_created',
          userId: null,
          ip: 'keys',
          details: {
            kid: first,
            algorithm: 'ES256',
            source: 'generated',
            reason: 'no_current_key',
            activatesAt: new Date('2026-01-01T00:00:00.000Z').toISOString(),
          },
        },
        {
          type: 'signing_key_created',
          userId: null,
          ip: ORIGIN.ip,
          details: {
            kid: next.kid,
            algorithm: 'ES256',
            source: 'generated',
            reason: 'rotation',
            activatesAt: next.activatesAt,
          },
        },
        {
          type: 'signing_key_activated',
          userId: null,
          ip: ORIGIN.ip,
          details: { kid: next.kid, algorithm: 'ES256', scheduledFor: next.activatesAt },
        },
        {
          type: 'signing_key_retired',
          userId: null,
          ip: ORIGIN.ip,
          details: { kid: first, algorithm: 'ES256', previousState: 'current' },
        },
      ]);
    });
  });

  describe('automatic rotation', () => {
    const t = useTestApp(asymmetric('EdDSA', { Keys__RotationIntervalDays: '1' }));

    it('should publish a successor once the current key is Keys__RotationIntervalDays old, on the next reading', async () => {
      const first = kidOf((await registerUser(t)).accessToken);
      const keys = t.app.get(KeysService);

      t.clock.advance(DAY_MS - 1);
      await keys.refresh();
      expect((await keys.list()).filter((key) => key.state === 'next')).toEqual([]);

      t.clock.advance(1);
      await keys.refresh();
      await keys.refresh();
      const next = (await keys.list()).filter((key) => key.state === 'next');
      expect(next).toEqual([
        expect.objectContaining({ algorithm: 'EdDSA', source: 'generated' }) as unknown,
      ]);
      expect(kidOf((await registerUser(t)).accessToken)).toBe(first);
      t.clock.advance(LEAD_MS);
      expect(kidOf((await registerUser(t)).accessToken)).toBe(next[0].kid);
      const created = (await auditRows(t.database)).filter(
        (row) => row.type === 'signing_key_created',
      );
      expect(created.map((row) => [row.ip, row.details.reason])).toEqual([
        ['keys', 'no_current_key'],
        ['keys', 'automatic_rotation'],
      ]);
    });
  });

  describe('moving a running deployment from HS256 to ES256', () => {
    let database: TestDatabase;
    let t: TestApp | undefined;

    beforeEach(async () => {
      database = await createTestDatabase();
    });
    afterEach(async () => {
      await t?.close();
      t = undefined;
      await database.drop();
    });

    it('should keep the old token reading /me across the switch until the secret is retired', async () => {
      t = await createTestApp({ database });
      const clock = t.clock;
      const old = await registerUser(t);
      expect(decodeJwt(old.accessToken).header.alg).toBe('HS256');
      await t.close();

      t = await createTestApp({ database, clock, ...asymmetric('ES256') });

      expect(await meStatus(t, old.accessToken)).toBe(200);
      const fresh = await registerUser(t);
      expect(decodeJwt(fresh.accessToken).header.alg).toBe('ES256');
      const refreshed = await t.post(REFRESH, { refreshToken: old.refreshToken });
      expect(decodeJwt(refreshed.json<{ accessToken: string }>().accessToken).header.alg).toBe(
        'ES256',
      );

      await t.app.get(KeysService).retire(jwtKey(TEST_SECRET_KEY).kid, ORIGIN);

      await expectRefused(t, old.accessToken);
      expect(await meStatus(t, fresh.accessToken)).toBe(200);
    });
  });
});
