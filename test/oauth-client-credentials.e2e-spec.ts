import { decodeProtectedHeader } from 'jose';
import * as oidc from 'openid-client';
import { AccessTokenError, verifyAccessToken } from '../packages/resource/src/index.js';
import { createTestApp, type TestApp } from './utils/create-test-app.js';
import { UNAUTHORIZED_BODY } from './utils/expected-bodies.js';
import { providerAppOptions, registerClient } from './utils/oauth-provider.js';
import { ME } from './utils/routes.js';

// Issue 40, the client credentials grant: a service (openid-client, a confidential client) gets
// a token for one declared resource, which @keygate/resource verifies against the provider.

const ORDERS = 'https://orders.example.com';
const FILES = 'https://files.example.com/mcp';
const RESOURCES = JSON.stringify([
  {
    uri: ORDERS,
    name: 'Orders',
    scopes: ['orders:read', 'orders:write'],
    accessTokenMinutes: 3,
  },
  { uri: FILES, name: 'Files', scopes: ['files:read'] },
]);

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp(
    await providerAppOptions('ES256', {
      OAuthServer__Resources: RESOURCES,
      OAuthServer__ClientCredentials: 'true',
    }),
  );
});
afterAll(async () => {
  await t.close();
});

async function service(
  app: TestApp,
  grantTypes: string[] = ['client_credentials'],
): Promise<oidc.Configuration> {
  const added = await registerClient(app, {
    name: 'Billing',
    redirectUris: grantTypes.includes('authorization_code')
      ? ['https://billing.example.com/cb']
      : [],
    grantTypes,
  });
  return oidc.discovery(
    new URL(app.baseUrl),
    added.clientId,
    undefined,
    oidc.ClientSecretBasic(added.clientSecret ?? ''),
    { execute: [oidc.allowInsecureRequests] },
  );
}

describe('OAuth server: client credentials grant', () => {
  it('should list the grant in discovery', async () => {
    const metadata = (await t.get('/.well-known/openid-configuration')).json<
      Record<string, unknown>
    >();
    expect(metadata.grant_types_supported).toContain('client_credentials');
  });

  it('should issue a token for the resource only: its aud, its scopes, its lifetime, no refresh or ID token', async () => {
    const config = await service(t);
    const clientId = config.clientMetadata().client_id;
    const tokens = await oidc.clientCredentialsGrant(config, {
      // Scopes of another resource and OpenID scopes are left out of the token.
      scope: 'orders:read files:read openid',
      // The host in another case: compared canonically, the aud is the declared URI.
      resource: 'https://ORDERS.example.com',
    });
    expect(tokens).toEqual({
      access_token: expect.any(String),
      token_type: 'bearer',
      expires_in: 180,
      scope: 'orders:read',
    });
    expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({ typ: 'at+jwt' });
    const claims = await verifyAccessToken(tokens.access_token, {
      issuer: t.baseUrl,
      resource: ORDERS,
      requiredScopes: ['orders:read'],
    });
    expect(claims).toMatchObject({
      iss: t.baseUrl,
      aud: ORDERS,
      sub: clientId,
      client_id: clientId,
      scope: 'orders:read',
    });
    expect(claims.exp - claims.iat!).toBe(180);

    const elsewhere = verifyAccessToken(tokens.access_token, {
      issuer: t.baseUrl,
      resource: FILES,
    });
    await expect(elsewhere).rejects.toBeInstanceOf(AccessTokenError);
    await expect(elsewhere).rejects.toMatchObject({ reason: 'audience', status: 401 });
    const me = await t.get(ME, tokens.access_token);
    expect({ status: me.status, body: me.json() }).toEqual({
      status: 401,
      body: UNAUTHORIZED_BODY,
    });
  });

  it.each([
    ['without a resource', {}, 'a resource indicator is required for the client credentials grant'],
    [
      'for a resource nobody declared',
      { resource: 'https://other.example.com' },
      'the resource indicator is not a resource of this server',
    ],
  ])('should answer invalid_target %s', async (_case, parameters, description) => {
    const config = await service(t);
    await expect(
      oidc.clientCredentialsGrant(config, { scope: 'orders:read', ...parameters }),
    ).rejects.toMatchObject({
      error: 'invalid_target',
      error_description: description,
      status: 400,
    });
  });

  it('should refuse a confidential client not registered for the grant', async () => {
    const config = await service(t, ['authorization_code']);
    await expect(
      oidc.clientCredentialsGrant(config, { resource: ORDERS, scope: 'orders:read' }),
    ).rejects.toMatchObject({
      error: 'invalid_request',
      error_description: 'requested grant type is not allowed for this client',
      status: 400,
    });
  });

  it('should refuse a public client', async () => {
    const added = await registerClient(t, {
      name: 'CLI',
      redirectUris: [],
      isPublic: true,
      grantTypes: ['device_code'],
    });
    const config = await oidc.discovery(
      new URL(t.baseUrl),
      added.clientId,
      undefined,
      oidc.None(),
      { execute: [oidc.allowInsecureRequests] },
    );
    await expect(
      oidc.clientCredentialsGrant(config, { resource: ORDERS, scope: 'orders:read' }),
    ).rejects.toMatchObject({
      error: 'invalid_request',
      error_description: 'requested grant type is not allowed for this client',
      status: 400,
    });
  });

  it('should refuse a wrong secret with invalid_client', async () => {
    const added = await registerClient(t, {
      name: 'Billing',
      redirectUris: [],
      grantTypes: ['client_credentials'],
    });
    const basic = Buffer.from(`${added.clientId}:kgcs_${'A'.repeat(43)}`).toString('base64');
    const answer = await t.request('/oauth/token', {
      method: 'POST',
      headers: {
        authorization: `Basic ${basic}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        resource: ORDERS,
        scope: 'orders:read',
      }).toString(),
    });
    expect({ status: answer.status, body: answer.json() }).toEqual({
      status: 401,
      body: { error: 'invalid_client', error_description: 'client authentication failed' },
    });
  });
});

describe('OAuth server: client credentials grant off (the default)', () => {
  let off: TestApp;
  beforeAll(async () => {
    off = await createTestApp(
      await providerAppOptions('ES256', { OAuthServer__Resources: RESOURCES }),
    );
  });
  afterAll(async () => {
    await off.close();
  });

  it('should not list the grant in discovery, and answer unsupported_grant_type', async () => {
    const metadata = (await off.get('/.well-known/openid-configuration')).json<
      Record<string, unknown>
    >();
    expect(metadata.grant_types_supported).not.toContain('client_credentials');
    const config = await service(off);
    await expect(
      oidc.clientCredentialsGrant(config, { resource: ORDERS, scope: 'orders:read' }),
    ).rejects.toMatchObject({
      error: 'unsupported_grant_type',
      error_description: 'unsupported grant_type requested',
      status: 400,
    });
  });
});
