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
    const { consent, tokens } = await tokensFor(user.email, {
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
      client_id: expect.any(String),
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
    await expect(
      verifyAccessToken(person.accessToken, { issuer: t.baseUrl, resource: MCP }),
    ).rejects.toBeInstanceOf(AccessTokenError);
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
