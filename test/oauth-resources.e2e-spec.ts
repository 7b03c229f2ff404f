import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import * as oidc from 'openid-client';
import { AccessTokenError, verifyAccessToken } from '../packages/resource/src/index.js';
import { createUser, DEFAULT_PASSWORD, registerUser } from './factories/user.factory.js';
import { createTestApp, type TestApp } from './utils/create-test-app.js';
import { UNAUTHORIZED_BODY } from './utils/expected-bodies.js';
import { providerAppOptions, registerClient, TestBrowser } from './utils/oauth-provider.js';
import { ME } from './utils/routes.js';

// Issue 40, resource indicators (RFC 8707): openid-client obtains tokens for declared APIs
// through the hosted pages, and @keygate/resource verifies them against the running provider.

const REDIRECT = 'https://agent.example.com/callback';
const MCP = 'https://mcp.example.com/mcp';
const ORDERS = 'https://api.example.com';
const RESOURCES = JSON.stringify([
  { uri: 'https://MCP.Example.com/mcp', name: 'MCP', scopes: ['mcp:tools', 'mcp:admin'] },
  { uri: ORDERS, name: 'Orders', scopes: ['orders:read'], accessTokenMinutes: 2 },
]);

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp(await providerAppOptions('ES256', { OAuthServer__Resources: RESOURCES }));
});
afterAll(async () => {
  await t.close();
});

interface Flow {
  readonly config: oidc.Configuration;
  readonly verifier: string;
  readonly state: string;
  readonly url: URL;
}

async function agentClient(): Promise<oidc.Configuration> {
  const added = await registerClient(t, {
    name: 'Agent',
    redirectUris: [REDIRECT],
    isPublic: true,
  });
  return oidc.discovery(new URL(t.baseUrl), added.clientId, undefined, oidc.None(), {
    execute: [oidc.allowInsecureRequests],
  });
}

async function startFlow(
  config: oidc.Configuration,
  parameters: Record<string, string>,
): Promise<Flow> {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    prompt: 'consent',
    ...parameters,
  });
  return { config, verifier, state, url };
}

/** Signs in and consents on the hosted pages; the consent page and the callback. */
async function consented(flow: Flow, email: string) {
  const browser = new TestBrowser();
  const signIn = await browser.follow(flow.url, REDIRECT);
  expect(signIn.status).toBe(200);
  const consent = await browser.submit(signIn, { email, password: DEFAULT_PASSWORD }, REDIRECT);
  expect(consent.status).toBe(200);
  const back = await browser.submit(consent, { decision: 'approve' }, REDIRECT);
  return { consent, callback: back.url };
}

async function tokensFor(
  email: string,
  parameters: Record<string, string>,
  tokenParameters: Record<string, string> = {},
) {
  const config = await agentClient();
  const flow = await startFlow(config, parameters);
  const { consent, callback } = await consented(flow, email);
  const tokens = await oidc.authorizationCodeGrant(
    config,
    callback,
    { pkceCodeVerifier: flow.verifier, expectedState: flow.state },
    tokenParameters,
  );
  return { config, consent, tokens };
}

async function publishedClaims(token: string) {
  const jwks = (await t.get('/.well-known/jwks.json')).json<JSONWebKeySet>();
  return (await jwtVerify(token, createLocalJWKSet(jwks), { issuer: t.baseUrl })).payload;
}

/** The error of an authorization request the provider sends back to the client. */
async function authorizationError(parameters: Record<string, string>) {
  const flow = await startFlow(await agentClient(), parameters);
  const answer = await new TestBrowser().open(flow.url);
  expect(answer.status).toBe(303);
  const back = new URL(answer.headers.get('location') ?? '');
  return {
    target: `${back.origin}${back.pathname}`,
    error: back.searchParams.get('error'),
    iss: back.searchParams.get('iss'),
  };
}

describe('OAuth server: resource indicators (RFC 8707)', () => {
  it("should issue a JWT for the resource asked, its aud exactly the declared URI and its scope only the resource's", async () => {
    const user = await createUser(t, { email: 'rita@example.com' });
    const { config, consent, tokens } = await tokensFor(user.email, {
      // The host in another case: compared canonically.
      resource: 'https://mcp.EXAMPLE.com/mcp',
      scope: 'openid mcp:tools orders:read',
    });
    expect(consent.text).toContain('mcp:tools');
    expect(consent.text).not.toContain('orders:read');
    expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({
      typ: 'at+jwt',
      alg: 'ES256',
    });
    const claims = await publishedClaims(tokens.access_token);
    expect(claims).toMatchObject({
      iss: t.baseUrl,
      aud: MCP,
      sub: user.id,
      scope: 'mcp:tools',
      client_id: config.clientMetadata().client_id,
    });
    expect(claims.exp! - claims.iat!).toBe(10 * 60);
  });

  it("should give a resource's own lifetime to its tokens", async () => {
    const user = await createUser(t, { email: 'lola@example.com' });
    const { tokens } = await tokensFor(user.email, { resource: ORDERS, scope: 'orders:read' });
    const claims = await publishedClaims(tokens.access_token);
    expect(claims).toMatchObject({ aud: ORDERS, scope: 'orders:read' });
    expect(claims.exp! - claims.iat!).toBe(2 * 60);
  });

  it('should answer invalid_target to an authorization for a resource nobody declared, sent back with iss', async () => {
    expect(
      await authorizationError({ resource: 'https://other.example.com/mcp', scope: 'mcp:tools' }),
    ).toEqual({ target: REDIRECT, error: 'invalid_target', iss: t.baseUrl });
    expect(
      await authorizationError({ resource: 'https://mcp.example.com/mcp#x', scope: 'mcp:tools' }),
    ).toEqual({ target: REDIRECT, error: 'invalid_target', iss: t.baseUrl });
  });

  it("should answer invalid_target to a token request for another resource than the authorization's", async () => {
    const user = await createUser(t, { email: 'nora@example.com' });
    const config = await agentClient();
    const flow = await startFlow(config, { resource: MCP, scope: 'mcp:tools' });
    const { callback } = await consented(flow, user.email);
    await expect(
      oidc.authorizationCodeGrant(
        config,
        callback,
        { pkceCodeVerifier: flow.verifier, expectedState: flow.state },
        { resource: ORDERS },
      ),
    ).rejects.toMatchObject({ error: 'invalid_target' });
  });

  it("should compare the resource of the token and refresh requests canonically with the authorization's", async () => {
    const user = await createUser(t, { email: 'clara@example.com' });
    const { config, tokens } = await tokensFor(
      user.email,
      { resource: 'https://MCP.example.com/mcp', scope: 'openid offline_access mcp:tools' },
      // Another spelling of the same resource: scheme and host case, the default port.
      { resource: 'HTTPS://mcp.example.COM:443/mcp' },
    );
    expect(await publishedClaims(tokens.access_token)).toMatchObject({
      aud: MCP,
      scope: 'mcp:tools',
    });
    // The ID token names the client it was issued to.
    const idToken = await publishedClaims(tokens.id_token!);
    expect(idToken).toMatchObject({
      aud: config.clientMetadata().client_id,
      azp: config.clientMetadata().client_id,
    });
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, {
      resource: 'https://mcp.EXAMPLE.com/mcp',
    });
    expect(await publishedClaims(refreshed.access_token)).toMatchObject({
      aud: MCP,
      scope: 'mcp:tools',
    });
    // The path is not folded: another path is another resource.
    await expect(
      oidc.refreshTokenGrant(config, refreshed.refresh_token!, {
        resource: 'https://mcp.example.com/MCP',
      }),
    ).rejects.toMatchObject({ error: 'invalid_target' });
  });

  it('should refresh (offline_access) for the granted resource, and refuse another one', async () => {
    const user = await createUser(t, { email: 'olga@example.com' });
    const { config, tokens } = await tokensFor(
      user.email,
      { resource: MCP, scope: 'offline_access mcp:tools' },
      { resource: MCP },
    );
    expect(tokens.refresh_token).toEqual(expect.any(String));
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, {
      resource: MCP,
    });
    expect(await publishedClaims(refreshed.access_token)).toMatchObject({
      aud: MCP,
      scope: 'mcp:tools',
    });
    await expect(
      oidc.refreshTokenGrant(config, refreshed.refresh_token!, { resource: ORDERS }),
    ).rejects.toMatchObject({ error: 'invalid_target' });
  });
});

describe('OAuth server: @keygate/resource against the provider', () => {
  it("should accept the agent's token for its resource only, and refuse a Keygate session token", async () => {
    const user = await createUser(t, { email: 'sara@example.com' });
    const { tokens } = await tokensFor(user.email, { resource: MCP, scope: 'openid mcp:tools' });

    const claims = await verifyAccessToken(tokens.access_token, {
      issuer: t.baseUrl,
      resource: MCP,
      requiredScopes: ['mcp:tools'],
    });
    expect(claims).toMatchObject({ aud: MCP, scope: 'mcp:tools', sub: user.id });

    const forOrders = verifyAccessToken(tokens.access_token, {
      issuer: t.baseUrl,
      resource: ORDERS,
    });
    await expect(forOrders).rejects.toBeInstanceOf(AccessTokenError);
    await expect(forOrders).rejects.toMatchObject({
      reason: 'audience',
      code: 'invalid_token',
      status: 401,
    });

    const missingScope = verifyAccessToken(tokens.access_token, {
      issuer: t.baseUrl,
      resource: MCP,
      requiredScopes: ['mcp:admin'],
    });
    await expect(missingScope).rejects.toMatchObject({
      reason: 'scope',
      code: 'insufficient_scope',
      status: 403,
    });

    const person = await registerUser(t);
    const session = verifyAccessToken(person.accessToken, { issuer: t.baseUrl, resource: MCP });
    await expect(session).rejects.toBeInstanceOf(AccessTokenError);
    await expect(session).rejects.toMatchObject({
      reason: 'issuer',
      code: 'invalid_token',
      status: 401,
    });
  });

  it("should refuse the agent's token at /api/auth/me and at /oauth/userinfo", async () => {
    const user = await createUser(t, { email: 'eva@example.com' });
    const { tokens } = await tokensFor(user.email, { resource: MCP, scope: 'openid mcp:tools' });
    const me = await t.get(ME, tokens.access_token);
    expect({ status: me.status, body: me.json() }).toEqual({
      status: 401,
      body: UNAUTHORIZED_BODY,
    });
    const userInfo = await t.get('/oauth/userinfo', tokens.access_token);
    expect(userInfo.status).toBe(401);
    expect(userInfo.json()).toEqual({
      error: 'invalid_token',
      error_description: 'invalid token provided',
    });
  });
});

describe('OAuth server: discovery and CORS for agents', () => {
  const AGENT = 'https://inspector.example.net';

  it('should list S256, the iss parameter, none, offline_access and every resource scope in both documents', async () => {
    for (const path of [
      '/.well-known/openid-configuration',
      '/.well-known/oauth-authorization-server',
    ]) {
      const answer = await t.request(path, { headers: { origin: AGENT } });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('access-control-allow-origin')).toBe(AGENT);
      const metadata = answer.json<Record<string, unknown>>();
      expect(metadata).toMatchObject({
        code_challenge_methods_supported: ['S256'],
        authorization_response_iss_parameter_supported: true,
      });
      expect(metadata.token_endpoint_auth_methods_supported).toContain('none');
      expect(metadata.scopes_supported).toEqual([
        'openid',
        'profile',
        'email',
        'offline_access',
        'mcp:tools',
        'mcp:admin',
        'orders:read',
      ]);
    }
  });

  it('should answer CORS for any origin at the token and revocation endpoints, preflight included', async () => {
    for (const path of ['/oauth/token', '/oauth/revoke']) {
      const preflight = await t.request(path, {
        method: 'OPTIONS',
        headers: {
          origin: AGENT,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe(AGENT);
      expect(preflight.headers.get('access-control-allow-methods')).toBe('POST');
    }
    const user = await createUser(t, { email: 'ines@example.com' });
    const config = await agentClient();
    const flow = await startFlow(config, { resource: MCP, scope: 'offline_access mcp:tools' });
    const { callback } = await consented(flow, user.email);
    const client = config.clientMetadata().client_id;
    const token = await t.request('/oauth/token', {
      method: 'POST',
      headers: { origin: AGENT, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code') ?? '',
        redirect_uri: REDIRECT,
        code_verifier: flow.verifier,
        client_id: client,
      }).toString(),
    });
    expect(token.status).toBe(200);
    expect(token.headers.get('access-control-allow-origin')).toBe(AGENT);
    const revoked = await t.request('/oauth/revoke', {
      method: 'POST',
      headers: { origin: AGENT, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: token.json<{ refresh_token: string }>().refresh_token,
        client_id: client,
      }).toString(),
    });
    expect(revoked.status).toBe(200);
    expect(revoked.headers.get('access-control-allow-origin')).toBe(AGENT);
  });

  it('should not open the other routes to any origin', async () => {
    const flow = await startFlow(await agentClient(), { resource: MCP, scope: 'mcp:tools' });
    const authorize = await t.request(`${flow.url.pathname}${flow.url.search}`, {
      headers: { origin: AGENT },
    });
    expect(authorize.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await t.request('/oauth/authorize', {
      method: 'OPTIONS',
      headers: { origin: AGENT, 'access-control-request-method': 'GET' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const person = await registerUser(t);
    const me = await t.request(ME, {
      headers: { origin: AGENT, authorization: `Bearer ${person.accessToken}` },
    });
    expect(me.status).toBe(200);
    expect(me.headers.get('access-control-allow-origin')).toBeNull();
    const mePreflight = await t.request(ME, {
      method: 'OPTIONS',
      headers: { origin: AGENT, 'access-control-request-method': 'GET' },
    });
    expect(mePreflight.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('should show the consent page again with prompt=consent when consent is remembered', async () => {
    const user = await createUser(t, { email: 'paula@example.com' });
    const config = await agentClient();
    await consented(await startFlow(config, { resource: MCP, scope: 'mcp:tools' }), user.email);
    const again = await consented(
      await startFlow(config, { resource: MCP, scope: 'mcp:tools' }),
      user.email,
    );
    expect(again.consent.text).toContain('name="decision" value="approve"');
    expect(again.callback.searchParams.get('code')).toEqual(expect.any(String));
  });
});

describe('OAuth server: OAuthServer__RequireResource', () => {
  let strict: TestApp;
  beforeAll(async () => {
    strict = await createTestApp(
      await providerAppOptions('ES256', {
        OAuthServer__Resources: RESOURCES,
        OAuthServer__RequireResource: 'true',
      }),
    );
  });
  afterAll(async () => {
    await strict.close();
  });

  it('should answer invalid_target to an authorization without resource, and accept one with it', async () => {
    const added = await registerClient(strict, {
      name: 'Agent',
      redirectUris: [REDIRECT],
      isPublic: true,
    });
    const config = await oidc.discovery(
      new URL(strict.baseUrl),
      added.clientId,
      undefined,
      oidc.None(),
      {
        execute: [oidc.allowInsecureRequests],
      },
    );
    const without = await startFlow(config, { scope: 'openid' });
    const refused = await new TestBrowser().open(without.url);
    expect(refused.status).toBe(303);
    const back = new URL(refused.headers.get('location') ?? '');
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('error')).toBe('invalid_target');
    expect(back.searchParams.get('iss')).toBe(strict.baseUrl);

    const withResource = await startFlow(config, { resource: MCP, scope: 'openid mcp:tools' });
    const signIn = await new TestBrowser().follow(withResource.url, REDIRECT);
    expect(signIn.status).toBe(200);
    expect(signIn.text).toContain('name="password"');
  });
});
