import { jest } from '@jest/globals';
import { base64url, SignJWT } from 'jose';
import {
  AccessTokenError,
  IssuerUnavailableError,
  verifyAccessToken,
  type VerifyAccessTokenOptions,
} from '../src/index.js';
import { LoopbackIssuer, signingKey, type SigningKey } from './loopback-issuer.js';

const RESOURCE = 'https://mcp.example.com/mcp';

/** The rejection of `promise`, which must reject. */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

/** The parts of an AccessTokenError a caller acts on. */
function verdict(error: unknown) {
  return error instanceof AccessTokenError
    ? {
        code: error.code,
        status: error.status,
        reason: error.reason,
        requiredScopes: error.requiredScopes,
      }
    : error;
}

describe('verifyAccessToken', () => {
  let issuer: LoopbackIssuer;
  let key: SigningKey;
  let options: VerifyAccessTokenOptions;

  beforeEach(async () => {
    issuer = await LoopbackIssuer.start();
    key = await signingKey('key-1');
    issuer.published = [key];
    options = { issuer: issuer.issuer, resource: RESOURCE, requiredScopes: ['files:read'] };
  });

  afterEach(async () => {
    jest.useRealTimers();
    await issuer.close();
  });

  it('should resolve to the claims of a good token, finding the keys through the metadata', async () => {
    const token = await issuer.mint(key, {
      sub: 'user-1',
      aud: RESOURCE,
      scope: 'files:read files:write',
      client_id: 'agent',
    });

    const claims = await verifyAccessToken(token, options);

    expect(claims).toEqual(
      expect.objectContaining({
        iss: issuer.issuer,
        sub: 'user-1',
        aud: RESOURCE,
        scope: 'files:read files:write',
        client_id: 'agent',
      }),
    );
    expect(issuer.requests).toEqual(['/.well-known/oauth-authorization-server', '/jwks']);
  });

  it.each(['ES256', 'ES384', 'EdDSA', 'RS256', 'PS256'])(
    'should accept a token signed with %s',
    async (alg) => {
      const other = await signingKey(`key-${alg}`, alg);
      issuer.published = [key, other];
      const token = await issuer.mint(other, { aud: RESOURCE, scope: 'files:read' });

      await expect(verifyAccessToken(token, options)).resolves.toEqual(
        expect.objectContaining({ aud: RESOURCE }),
      );
    },
  );

  it('should keep the key set: a second token fetches nothing', async () => {
    await verifyAccessToken(
      await issuer.mint(key, { aud: RESOURCE, scope: 'files:read' }),
      options,
    );
    await verifyAccessToken(
      await issuer.mint(key, { aud: RESOURCE, scope: 'files:read' }),
      options,
    );

    expect(issuer.requests).toEqual(['/.well-known/oauth-authorization-server', '/jwks']);
  });

  it.each([
    ['the same URI', RESOURCE],
    ['the scheme and host in capitals', 'HTTPS://MCP.Example.COM/mcp'],
    ['the default port and a fragment', 'https://mcp.example.com:443/mcp#tools'],
    ['a one-element array', [RESOURCE]],
  ])('should accept an audience of %s', async (_label, aud) => {
    const token = await issuer.mint(key, { aud, scope: 'files:read' });

    await expect(verifyAccessToken(token, options)).resolves.toEqual(
      expect.objectContaining({ aud }),
    );
  });

  it.each([
    ['another resource', 'https://other.example.com/mcp'],
    ['another path', 'https://mcp.example.com/other'],
    ['the path in capitals', 'https://mcp.example.com/MCP'],
    ['a trailing slash', 'https://mcp.example.com/mcp/'],
    ['http instead of https', 'http://mcp.example.com/mcp'],
    ['the resource among others', [RESOURCE, 'https://other.example.com/mcp']],
    ['no URL at all', 'keygate-clients'],
    ['an empty array', []],
  ])('should refuse an audience of %s', async (_label, aud) => {
    const token = await issuer.mint(key, { aud, scope: 'files:read' });

    expect(verdict(await rejectionOf(verifyAccessToken(token, options)))).toEqual({
      code: 'invalid_token',
      status: 401,
      reason: 'audience',
      requiredScopes: ['files:read'],
    });
  });

  it('should refuse a token without an audience', async () => {
    const token = await issuer.mint(key, { scope: 'files:read' });

    expect(verdict(await rejectionOf(verifyAccessToken(token, options)))).toEqual(
      expect.objectContaining({ code: 'invalid_token', reason: 'claims' }),
    );
  });

  it.each([
    ['another issuer', () => 'https://evil.example.com'],
    ['the issuer with a trailing slash', () => `${issuer.issuer}/`],
  ])('should refuse a token of %s', async (_label, iss) => {
    const token = await issuer.mint(key, { aud: RESOURCE, scope: 'files:read', iss: iss() });

    const error = await rejectionOf(verifyAccessToken(token, options));

    expect(verdict(error)).toEqual(
      expect.objectContaining({ code: 'invalid_token', status: 401, reason: 'issuer' }),
    );
    expect((error as Error).message).toBe('The token was issued by another issuer.');
  });

  it('should refuse a token expired longer ago than the clock tolerance (30 s)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await issuer.mint(key, { aud: RESOURCE, scope: 'files:read', exp: now - 31 });

    const error = await rejectionOf(verifyAccessToken(token, options));

    expect(verdict(error)).toEqual(
      expect.objectContaining({ code: 'invalid_token', status: 401, reason: 'expired' }),
    );
    expect((error as Error).message).toBe('The token has expired.');
  });

  it('should accept a token expired within the clock tolerance, and not with a tolerance of 0', async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await issuer.mint(key, { aud: RESOURCE, scope: 'files:read', exp: now - 20 });

    await expect(verifyAccessToken(token, options)).resolves.toBeDefined();
    expect(
      verdict(await rejectionOf(verifyAccessToken(token, { ...options, clockTolerance: 0 }))),
    ).toEqual(expect.objectContaining({ reason: 'expired' }));
  });

  it('should refuse a token without an expiry', async () => {
    const token = await new SignJWT({ iss: issuer.issuer, aud: RESOURCE, scope: 'files:read' })
      .setProtectedHeader({ alg: key.alg, kid: key.kid })
      .sign(key.privateKey);

    expect(verdict(await rejectionOf(verifyAccessToken(token, options)))).toEqual(
      expect.objectContaining({ code: 'invalid_token', reason: 'claims' }),
    );
  });

  it('should refuse a token that is not valid yet', async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await issuer.mint(key, { aud: RESOURCE, scope: 'files:read', nbf: now + 120 });

    expect(verdict(await rejectionOf(verifyAccessToken(token, options)))).toEqual(
      expect.objectContaining({ code: 'invalid_token', reason: 'not_yet_valid' }),
    );
  });

  it.each([
    ['one of two required scopes missing', 'files:read', ['files:read', 'files:write']],
    ['no scope claim', undefined, ['files:read']],
    ['a scope that only starts like the required one', 'files:read-only', ['files:read']],
    ['an empty scope claim', '', ['files:read']],
  ])('should answer insufficient_scope for %s', async (_label, scope, requiredScopes) => {
    const token = await issuer.mint(key, {
      aud: RESOURCE,
      ...(scope === undefined ? {} : { scope }),
    });

    const error = await rejectionOf(verifyAccessToken(token, { ...options, requiredScopes }));

    expect(verdict(error)).toEqual({
      code: 'insufficient_scope',
      status: 403,
      reason: 'scope',
      requiredScopes,
    });
    expect(error).toBeInstanceOf(AccessTokenError);
    expect((error as Error).name).toBe('AccessTokenError');
  });

  it('should say which scope is missing', async () => {
    const token = await issuer.mint(key, { aud: RESOURCE, scope: 'files:read' });

    await expect(
      verifyAccessToken(token, { ...options, requiredScopes: ['files:read', 'files:write'] }),
    ).rejects.toThrow('The token lacks the scope files:write.');
  });

  it('should accept a token without scopes when none are required', async () => {
    const token = await issuer.mint(key, { aud: RESOURCE });

    await expect(
      verifyAccessToken(token, { issuer: issuer.issuer, resource: RESOURCE }),
    ).resolves.toEqual(expect.objectContaining({ aud: RESOURCE }));
  });

  it('should refuse a scope claim that is not a string', async () => {
    const token = await issuer.mint(key, { aud: RESOURCE, scope: ['files:read'] });

    expect(verdict(await rejectionOf(verifyAccessToken(token, options)))).toEqual(
      expect.objectContaining({ code: 'invalid_token', reason: 'claims' }),
    );
  });

  describe('when the issuer rotates its keys', () => {
    const start = new Date('2026-11-29T08:00:00Z');

    beforeEach(() => {
      // Only Date: jose times its cache and cooldown with Date.now(); sockets keep real timers.
      jest.useFakeTimers({
        now: start,
        doNotFake: [
          'hrtime',
          'nextTick',
          'performance',
          'queueMicrotask',
          'requestAnimationFrame',
          'cancelAnimationFrame',
          'requestIdleCallback',
          'cancelIdleCallback',
          'setImmediate',
          'clearImmediate',
          'setInterval',
          'clearInterval',
          'setTimeout',
          'clearTimeout',
        ],
      });
    });

    it('should fetch the key set once more for a key it does not know, at most every 30 s', async () => {
      await verifyAccessToken(
        await issuer.mint(key, { aud: RESOURCE, scope: 'files:read' }),
        options,
      );
      expect(issuer.keySetFetches).toBe(1);
      const next = await signingKey('key-2');
      issuer.published = [key, next];

      jest.setSystemTime(start.getTime() + 31_000);
      const rotated = await issuer.mint(next, { aud: RESOURCE, scope: 'files:read' });
      await expect(verifyAccessToken(rotated, options)).resolves.toEqual(
        expect.objectContaining({ aud: RESOURCE }),
      );
      expect(issuer.keySetFetches).toBe(2);

      const stranger = await signingKey('key-never-published');
      const unknown = await issuer.mint(stranger, { aud: RESOURCE, scope: 'files:read' });
      expect(verdict(await rejectionOf(verifyAccessToken(unknown, options)))).toEqual(
        expect.objectContaining({ code: 'invalid_token', status: 401, reason: 'unknown_key' }),
      );
      expect(verdict(await rejectionOf(verifyAccessToken(unknown, options)))).toEqual(
        expect.objectContaining({ reason: 'unknown_key' }),
      );
      expect(issuer.keySetFetches).toBe(2);

      jest.setSystemTime(start.getTime() + 62_000);
      expect(verdict(await rejectionOf(verifyAccessToken(unknown, options)))).toEqual(
        expect.objectContaining({ reason: 'unknown_key' }),
      );
      expect(issuer.keySetFetches).toBe(3);
      await expect(verifyAccessToken(rotated, options)).resolves.toBeDefined();
      expect(issuer.keySetFetches).toBe(3);
    });
  });

  describe('algorithms', () => {
    it('should refuse HS256, even keyed with the public key, without fetching any key', async () => {
      const secret = new TextEncoder().encode(JSON.stringify(key.jwk));
      const token = await new SignJWT({ iss: issuer.issuer, aud: RESOURCE, scope: 'files:read' })
        .setProtectedHeader({ alg: 'HS256', kid: key.kid })
        .setExpirationTime('5m')
        .sign(secret);

      const error = await rejectionOf(verifyAccessToken(token, options));

      expect(verdict(error)).toEqual(
        expect.objectContaining({ code: 'invalid_token', status: 401, reason: 'algorithm' }),
      );
      expect((error as Error).message).toBe('The token\'s algorithm "HS256" is not accepted.');
      expect(issuer.requests).toEqual([]);
    });

    it('should refuse alg none', async () => {
      const good = await issuer.mint(key, { aud: RESOURCE, scope: 'files:read' });
      const header = base64url.encode(JSON.stringify({ alg: 'none', kid: key.kid }));
      const unsigned = `${header}.${good.split('.')[1]}.`;

      expect(verdict(await rejectionOf(verifyAccessToken(unsigned, options)))).toEqual(
        expect.objectContaining({ code: 'invalid_token', reason: 'algorithm' }),
      );
    });

    it('should refuse an algorithm the resource server left out', async () => {
      const rsa = await signingKey('rsa', 'RS256');
      issuer.published = [key, rsa];
      const token = await issuer.mint(rsa, { aud: RESOURCE, scope: 'files:read' });

      expect(
        verdict(await rejectionOf(verifyAccessToken(token, { ...options, algorithms: ['ES256'] }))),
      ).toEqual(expect.objectContaining({ reason: 'algorithm' }));
    });

    it.each([
      ['HS256', ['HS256']],
      ['none', ['none']],
      ['an empty list', []],
    ])('should not be configurable to accept %s', async (_label, algorithms) => {
      await expect(
        verifyAccessToken('a.b.c', {
          ...options,
          algorithms: algorithms as unknown as ['ES256'],
        }),
      ).rejects.toThrow(TypeError);
    });
  });

  describe('signatures', () => {
    it.each([
      [
        'a changed payload',
        (token: string) => {
          const [header, , signature] = token.split('.');
          const payload = base64url.encode(
            JSON.stringify({
              iss: issuer.issuer,
              aud: RESOURCE,
              scope: 'files:read admin',
              exp: 9e9,
            }),
          );
          return `${header}.${payload}.${signature}`;
        },
      ],
      [
        'a changed signature',
        (token: string) => {
          const [header, payload, signature] = token.split('.');
          const bytes = base64url.decode(signature);
          bytes[0] ^= 1;
          return `${header}.${payload}.${base64url.encode(bytes)}`;
        },
      ],
    ])('should refuse %s', async (_label, tamper) => {
      const token = tamper(await issuer.mint(key, { aud: RESOURCE, scope: 'files:read' }));

      const error = await rejectionOf(verifyAccessToken(token, options));

      expect(verdict(error)).toEqual(
        expect.objectContaining({ code: 'invalid_token', status: 401, reason: 'signature' }),
      );
    });

    it('should refuse a token signed by a key of the same kid that the issuer never published', async () => {
      const impostor = await signingKey(key.kid);
      const token = await issuer.mint(impostor, { aud: RESOURCE, scope: 'files:read' });

      expect(verdict(await rejectionOf(verifyAccessToken(token, options)))).toEqual(
        expect.objectContaining({ reason: 'signature' }),
      );
    });

    it.each([
      ['an empty string', ''],
      ['two segments', 'a.b'],
      ['garbage in three segments', 'a.b.c'],
      ['a huge string', `${'a'.repeat(20_000)}.b.c`],
    ])('should refuse %s as malformed', async (_label, token) => {
      expect(verdict(await rejectionOf(verifyAccessToken(token, options)))).toEqual(
        expect.objectContaining({ code: 'invalid_token', reason: 'malformed' }),
      );
    });
  });

  describe('finding the keys', () => {
    it('should fall back to openid-configuration, after the path of an issuer that has one', async () => {
      const nested = await LoopbackIssuer.start('/tenant');
      try {
        nested.published = [key];
        nested.documents.clear();
        nested.documents.set('/tenant/.well-known/openid-configuration', {
          status: 200,
          body: { issuer: nested.issuer, jwks_uri: `${nested.origin}/jwks` },
        });
        const token = await nested.mint(key, { aud: RESOURCE, scope: 'files:read' });

        await expect(
          verifyAccessToken(token, { ...options, issuer: nested.issuer }),
        ).resolves.toBeDefined();
        expect(nested.requests).toEqual([
          '/.well-known/oauth-authorization-server/tenant',
          '/.well-known/openid-configuration/tenant',
          '/tenant/.well-known/openid-configuration',
          '/jwks',
        ]);
      } finally {
        await nested.close();
      }
    });

    it('should use jwksUri as given, without discovery', async () => {
      issuer.documents.clear();
      const token = await issuer.mint(key, { aud: RESOURCE, scope: 'files:read' });

      await expect(
        verifyAccessToken(token, { ...options, jwksUri: `${issuer.origin}/jwks` }),
      ).resolves.toBeDefined();
      expect(issuer.requests).toEqual(['/jwks']);
    });

    it.each([
      [
        'metadata naming another issuer',
        (it: LoopbackIssuer) => ({
          issuer: 'https://evil.example.com',
          jwks_uri: `${it.origin}/jwks`,
        }),
        'names the issuer "https://evil.example.com"',
      ],
      [
        'metadata without jwks_uri',
        (it: LoopbackIssuer) => ({ issuer: it.issuer }),
        'has no jwks_uri',
      ],
      [
        'a jwks_uri on plain http elsewhere than localhost',
        (it: LoopbackIssuer) => ({ issuer: it.issuer, jwks_uri: 'http://keys.example.com/jwks' }),
        'has an unusable jwks_uri',
      ],
    ])('should be unavailable, not refuse the token, with %s', async (_label, body, message) => {
      issuer.documents.set('/.well-known/oauth-authorization-server', {
        status: 200,
        body: body(issuer),
      });
      const token = await issuer.mint(key, { aud: RESOURCE, scope: 'files:read' });

      const error = await rejectionOf(verifyAccessToken(token, options));

      expect(error).toBeInstanceOf(IssuerUnavailableError);
      expect((error as Error).message).toContain(message);
      expect(issuer.keySetFetches).toBe(0);
    });

    it('should be unavailable when the issuer publishes no metadata, and not ask again at once', async () => {
      issuer.documents.clear();
      const token = await issuer.mint(key, { aud: RESOURCE, scope: 'files:read' });

      await expect(verifyAccessToken(token, options)).rejects.toThrow(
        `${issuer.issuer} publishes no authorization server metadata; pass jwksUri instead.`,
      );
      await expect(verifyAccessToken(token, options)).rejects.toBeInstanceOf(
        IssuerUnavailableError,
      );
      expect(issuer.requests).toEqual([
        '/.well-known/oauth-authorization-server',
        '/.well-known/openid-configuration',
      ]);
    });

    it('should be unavailable when the key set cannot be fetched', async () => {
      const token = await issuer.mint(key, { aud: RESOURCE, scope: 'files:read' });
      await issuer.close();

      const error = await rejectionOf(
        verifyAccessToken(token, { ...options, jwksUri: `${issuer.origin}/jwks` }),
      );

      expect(error).toBeInstanceOf(IssuerUnavailableError);
      issuer = await LoopbackIssuer.start();
    });

    it.each([
      ['an issuer on plain http elsewhere than localhost', { issuer: 'http://id.example.com' }],
      ['an issuer with a query', { issuer: 'https://id.example.com/?tenant=1' }],
      ['a resource with a fragment', { resource: 'https://mcp.example.com/mcp#x' }],
      ['a relative resource', { resource: '/mcp' }],
      ['a required scope with a space', { requiredScopes: ['files:read files:write'] }],
      ['a negative clock tolerance', { clockTolerance: -1 }],
    ])('should throw a TypeError for %s', async (_label, changed) => {
      await expect(verifyAccessToken('a.b.c', { ...options, ...changed })).rejects.toThrow(
        TypeError,
      );
    });
  });
});
