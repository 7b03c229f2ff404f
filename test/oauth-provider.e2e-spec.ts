import { createTestApp, type TestApp } from './utils/create-test-app.js';
import { providerAppOptions } from './utils/oauth-provider.js';

// Issue 39, part 2: the protocol library mounted on Keygate's listener. Needs Node 22 or later.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp(await providerAppOptions());
});
afterAll(async () => {
  await t.close();
});

describe('OAuth server: discovery', () => {
  it('should publish the OpenID configuration with the endpoints under /oauth/ and Keygate keys', async () => {
    const response = await t.get('/.well-known/openid-configuration');
    expect(response.status).toBe(200);
    const issuer = t.baseUrl;
    expect(response.json()).toMatchObject({
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      userinfo_endpoint: `${issuer}/oauth/userinfo`,
      revocation_endpoint: `${issuer}/oauth/revoke`,
      introspection_endpoint: `${issuer}/oauth/introspect`,
      end_session_endpoint: `${issuer}/oauth/logout`,
      jwks_uri: `${issuer}/.well-known/jwks.json`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'none'],
      id_token_signing_alg_values_supported: ['ES256'],
      claims_supported: expect.arrayContaining([
        'sub',
        'email',
        'email_verified',
        'name',
        'preferred_username',
      ]),
    });
    const body = response.json<Record<string, unknown>>();
    expect(body).not.toHaveProperty('registration_endpoint');
    expect(body).not.toHaveProperty('pushed_authorization_request_endpoint');
  });

  it('should serve the same document as RFC 8414 authorization server metadata', async () => {
    const oidc = await t.get('/.well-known/openid-configuration');
    const oauth = await t.get('/.well-known/oauth-authorization-server');
    expect(oauth.status).toBe(200);
    expect(oauth.json()).toEqual(oidc.json());
  });

  it("should publish in jwks_uri Keygate's own key set, where the provider's signing key is", async () => {
    const jwks = await t.get('/.well-known/jwks.json');
    expect(jwks.status).toBe(200);
    expect(jwks.json<{ keys: unknown[] }>().keys.length).toBeGreaterThan(0);
  });

  it('should leave the rest of the interface as it was, its strict JSON bodies included', async () => {
    expect((await t.get('/api/auth/me')).status).toBe(401);
    expect((await t.get('/.well-known/unknown')).status).toBe(404);
    const login = await t.post('/api/auth/login', { email: 'nobody@example.com', password: 'x' });
    expect({ status: login.status, message: login.json().message }).toEqual({
      status: 401,
      message: 'Credenciales inválidas.',
    });
    const form = await t.request('/api/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'email=a&password=b',
    });
    expect({ status: form.status, message: form.json().message }).toEqual({
      status: 415,
      message: 'Unsupported Media Type',
    });
  });

  it('should read a form body at the token endpoint (not consumed before the library reads it)', async () => {
    const response = await t.request('/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=authorization_code&code=x&client_id=nobody',
    });
    expect(response.status).toBe(401);
    expect(response.json()).toEqual({
      error: 'invalid_client',
      error_description: 'client authentication failed',
    });
  });
});
