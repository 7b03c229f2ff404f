import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as oidc from 'openid-client';
import { AdminKeysService } from '../src/admin/keys/admin-keys.service.js';
import { digestOpaqueToken } from '../src/common/crypto/opaque-token.js';
import { RandomSource } from '../src/common/random/random-source.js';
import { internalOrigin } from '../src/common/request-origin/request-origin.js';
import { OAuthClient } from '../src/oauth-server/entities/oauth-client.entity.js';
import { InitialAccessTokensService } from '../src/oauth-server/registration/initial-access-tokens.service.js';
import { createUser, DEFAULT_PASSWORD } from './factories/user.factory.js';
import { auditRows } from './utils/audit-rows.js';
import { runCliOn } from './utils/cli-process.js';
import { createTestApp, type TestApp } from './utils/create-test-app.js';
import { providerAppOptions, registerClient, TestBrowser } from './utils/oauth-provider.js';

// Issue 40, dynamic client registration (RFC 7591): openid-client registers itself against the
// running provider, then signs a person in through the hosted pages; the refusals are read as
// RFC 7591 error bodies.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SECRET = /^kgcs_[A-Za-z0-9_-]{43}$/;
const UNVERIFIED =
  'Aplicación no verificada: se registró por sí misma y Keygate no sabe quién la publica. Permita el acceso solo si la reconoce.';
const LOCALHOST_ONLY =
  'Esta aplicación solo vuelve a este mismo equipo (localhost): permita el acceso solo si acaba de iniciarla usted.';

function register(t: TestApp, body: unknown, headers: Record<string, string> = {}) {
  return t.request('/oauth/register', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

function refusal(error: string, description: string) {
  return { error, error_description: description };
}

describe('OAuth server: dynamic registration off (the default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(await providerAppOptions());
  });
  afterAll(async () => {
    await t.close();
  });

  it('should neither list nor serve a registration endpoint', async () => {
    const discovery = (await t.get('/.well-known/oauth-authorization-server')).json();
    expect(discovery).not.toHaveProperty('registration_endpoint');
    expect(discovery).not.toHaveProperty('client_id_metadata_document_supported');
    const answer = await register(t, { redirect_uris: ['http://127.0.0.1/cb'] });
    expect(answer.status).toBe(404);
    expect(answer.text).toBe('Not Found');
    expect(await t.dataSource.getRepository(OAuthClient).count()).toBe(0);
  });
});

describe('OAuth server: open dynamic registration', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(
      await providerAppOptions('ES256', { OAuthServer__DynamicRegistration: 'open' }),
    );
  });
  afterAll(async () => {
    await t.close();
  });

  it('should list what agents read in discovery', async () => {
    const discovery = (await t.get('/.well-known/oauth-authorization-server')).json();
    expect(discovery).toMatchObject({
      registration_endpoint: `${t.baseUrl}/oauth/register`,
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'none'],
    });
    expect(discovery.scopes_supported).toEqual(
      expect.arrayContaining(['openid', 'offline_access']),
    );
  });

  it('should register a native client (no application_type, loopback redirects) as public, and let it return to any port', async () => {
    const registered = await oidc.dynamicClientRegistration(
      new URL(t.baseUrl),
      { redirect_uris: ['http://127.0.0.1/callback'], client_name: 'Agente de escritorio' },
      oidc.None(),
      { execute: [oidc.allowInsecureRequests] },
    );
    const metadata = registered.clientMetadata();
    expect(metadata).toEqual({
      client_id: expect.stringMatching(UUID) as string,
      client_id_issued_at: expect.any(Number) as number,
      client_name: 'Agente de escritorio',
      application_type: 'native',
      redirect_uris: ['http://127.0.0.1/callback'],
      post_logout_redirect_uris: [],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      scope: 'openid profile email offline_access',
      id_token_signed_response_alg: 'ES256',
      dpop_bound_access_tokens: false,
      require_auth_time: false,
      subject_type: 'public',
    });
    const row = await t.dataSource
      .getRepository(OAuthClient)
      .findOneByOrFail({ id: metadata.client_id });
    expect(row).toMatchObject({ isPublic: true, isSelfRegistered: true, secretDigest: null });

    // The ephemeral port of the moment (RFC 8252 §7.3): signed in and consented, code redeemed.
    const user = await createUser(t, { email: 'nativa@example.com' });
    const redirect = 'http://127.0.0.1:51234/callback';
    const first = await authorize(registered, redirect, user.email);
    expect(first.consent.status).toBe(200);
    expect(first.consent.text).toContain(UNVERIFIED);
    expect(first.consent.text).toContain(LOCALHOST_ONLY);
    expect(first.consent.text).toContain('Después volverá a <strong>127.0.0.1:51234</strong>.');
    const tokens = await oidc.authorizationCodeGrant(registered, first.callback, {
      pkceCodeVerifier: first.verifier,
      expectedState: first.state,
    });
    expect(tokens.access_token).toEqual(expect.any(String));
  });

  it("should ask for consent at every authorization of a self-registered web client, while an operator's client is remembered", async () => {
    const web = 'https://agent.example.com/callback';
    const user = await createUser(t, { email: 'web@example.com' });
    const registered = await register(t, { redirect_uris: [web], client_name: 'Agente remoto' });
    const selfConfig = await configFor(t, registered.json<{ client_id: string }>().client_id);
    const first = await authorize(selfConfig, web, user.email);
    expect(first.consent.text).toContain('La aplicación <strong>Agente remoto</strong>');
    expect(first.consent.text).toContain(UNVERIFIED);
    expect(first.consent.text).not.toContain(LOCALHOST_ONLY);
    expect(first.consent.text).toContain('Después volverá a <strong>agent.example.com</strong>.');
    expect(first.callback.searchParams.get('code')).toEqual(expect.any(String));
    const again = await authorizeInSession(selfConfig, web, first.browser);
    expect(again.status).toBe(200);
    expect(again.text).toContain(UNVERIFIED);

    // The control: the same flow for a client an operator registered skips the page.
    const added = await registerClient(t, { name: 'Operador', redirectUris: [web] });
    const operatorConfig = await configFor(t, added.clientId);
    const trusted = await authorize(operatorConfig, web, user.email);
    expect(trusted.consent.text).not.toContain(UNVERIFIED);
    const remembered = await authorizeInSession(operatorConfig, web, trusted.browser);
    expect(remembered.status).toBe(303);
    expect(remembered.url.href.startsWith(`${web}?code=`)).toBe(true);
  });

  it('should register a confidential web client, return its secret once and store only its digest, with an audit event', async () => {
    const answer = await register(t, {
      redirect_uris: ['https://agent.example.com/callback'],
      client_name: 'Agente web',
    });
    expect(answer.status).toBe(201);
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    expect(answer.headers.get('cache-control')).toBe('no-store');
    const body = answer.json<{ client_id: string; client_secret: string }>();
    expect(body).toEqual({
      client_id: expect.stringMatching(UUID) as string,
      client_id_issued_at: expect.any(Number) as number,
      client_secret: expect.stringMatching(SECRET) as string,
      client_secret_expires_at: 0,
      client_name: 'Agente web',
      application_type: 'web',
      redirect_uris: ['https://agent.example.com/callback'],
      post_logout_redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      scope: 'openid profile email offline_access',
      id_token_signed_response_alg: 'ES256',
      dpop_bound_access_tokens: false,
      require_auth_time: false,
      subject_type: 'public',
    });
    const row = await t.dataSource
      .getRepository(OAuthClient)
      .findOneByOrFail({ id: body.client_id });
    expect(row).toMatchObject({
      isPublic: false,
      isSelfRegistered: true,
      secretDigest: digestOpaqueToken(body.client_secret),
    });
    expect(JSON.stringify(row)).not.toContain(body.client_secret);
    const events = (await auditRows(t.database)).filter(
      (event) => (event.details as { clientId?: unknown }).clientId === body.client_id,
    );
    expect(events.map(({ type, userId, ip, details }) => ({ type, userId, ip, details }))).toEqual([
      {
        type: 'oauth_client_added',
        userId: null,
        ip: '127.0.0.1',
        details: { clientId: body.client_id, selfRegistered: true },
      },
    ]);
    expect(JSON.stringify(events)).not.toContain(body.client_secret);

    // Operators see it as one that registered itself, with the code grant only.
    const { secret } = await t.app
      .get(AdminKeysService)
      .create(
        'client-reader',
        ['oauth-clients:read'],
        internalOrigin('cli', t.app.get(RandomSource)),
      );
    const listed = await t.request('/api/admin/oauth/clients', {
      headers: { authorization: `Bearer ${secret}` },
    });
    expect(
      listed
        .json<{ clients: { clientId: string; selfRegistered: boolean; grantTypes: string[] }[] }>()
        .clients.filter(({ clientId }) => clientId === body.client_id)
        .map(({ selfRegistered, grantTypes }) => ({ selfRegistered, grantTypes })),
    ).toEqual([{ selfRegistered: true, grantTypes: ['authorization_code'] }]);
  });

  it.each([
    [
      'a web client with an http redirect',
      { application_type: 'web', redirect_uris: ['http://127.0.0.1/cb'] },
      refusal('invalid_redirect_uri', 'redirect_uris of a web client must all be https URIs'),
    ],
    [
      'an http redirect away from loopback',
      { redirect_uris: ['http://agent.example.com/cb'] },
      refusal('invalid_redirect_uri', 'redirect_uris of a web client must all be https URIs'),
    ],
    [
      'a javascript: redirect',
      { application_type: 'native', redirect_uris: ['javascript:alert(document.cookie)'] },
      refusal(
        'invalid_redirect_uri',
        'redirect_uris of a native client must be http loopback, https or private-use scheme URIs',
      ),
    ],
    [
      'a data: redirect next to a loopback one',
      { redirect_uris: ['http://127.0.0.1/cb', 'data:text/html,hi'] },
      refusal('invalid_redirect_uri', 'redirect_uris of a web client must all be https URIs'),
    ],
    [
      'a file: redirect of a native client',
      { application_type: 'native', redirect_uris: ['file:///etc/passwd'] },
      refusal(
        'invalid_redirect_uri',
        'redirect_uris of a native client must be http loopback, https or private-use scheme URIs',
      ),
    ],
    [
      'no redirect URI',
      { client_name: 'Nada' },
      refusal('invalid_redirect_uri', 'redirect_uris must be a non-empty array of strings'),
    ],
    [
      'eleven redirect URIs',
      { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example.com/${i}`) },
      refusal('invalid_redirect_uri', 'redirect_uris has more than 10 members'),
    ],
    [
      'eleven contacts',
      {
        redirect_uris: ['https://a.example.com/cb'],
        contacts: Array.from({ length: 11 }, (_, i) => `c${i}@example.com`),
      },
      refusal('invalid_client_metadata', 'contacts has more than 10 members'),
    ],
    [
      'the implicit grant',
      { redirect_uris: ['https://a.example.com/cb'], grant_types: ['implicit'] },
      refusal(
        'invalid_client_metadata',
        'only the authorization code flow (and refresh tokens) may be registered',
      ),
    ],
    [
      'a secret sent with the request',
      {
        redirect_uris: ['https://a.example.com/cb'],
        token_endpoint_auth_method: 'client_secret_post',
      },
      refusal(
        'invalid_client_metadata',
        'token_endpoint_auth_method must be none or client_secret_basic',
      ),
    ],
    [
      'a name with control characters',
      { redirect_uris: ['https://a.example.com/cb'], client_name: 'Banco\u202Eoficial' },
      refusal(
        'invalid_client_metadata',
        'client_name must be 1 to 100 characters, without control or invisible characters',
      ),
    ],
  ])('should refuse %s', async (_case, body, expected) => {
    const before = await t.dataSource.getRepository(OAuthClient).count();
    const answer = await register(t, body);
    expect(answer.status).toBe(400);
    expect(answer.json()).toEqual(expected);
    expect(await t.dataSource.getRepository(OAuthClient).count()).toBe(before);
  });

  it('should refuse a body over 16 KiB, and one whose length is not declared', async () => {
    const oversize = await register(t, {
      redirect_uris: ['https://a.example.com/cb'],
      client_name: 'x',
      padding: 'x'.repeat(16 * 1024),
    });
    expect(oversize.status).toBe(413);
    expect(oversize.json()).toEqual(
      refusal('invalid_request', 'the registration request must be at most 16384 bytes'),
    );
    const chunked = await t.request('/oauth/register', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(
            new TextEncoder().encode('{"redirect_uris":["https://a.example.com/cb"]}'),
          );
          controller.close();
        },
      }),
      duplex: 'half',
    });
    expect(chunked.status).toBe(411);
    expect(chunked.json()).toEqual(
      refusal('invalid_request', 'the registration request must declare its length'),
    );
  });

  it('should answer CORS for any origin on the registration endpoint', async () => {
    const preflight = await t.request('/oauth/register', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://inspector.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toBe('POST');
    expect(preflight.headers.get('access-control-allow-headers')).toBe(
      'Authorization, Content-Type',
    );
  });
});

describe('OAuth server: registrations per client address', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(
      await providerAppOptions('ES256', { OAuthServer__DynamicRegistration: 'open' }),
    );
  });
  afterAll(async () => {
    await t.close();
  });

  it('should refuse the 21st registration from one address within an hour, and accept one in the next hour', async () => {
    const body = { redirect_uris: ['http://127.0.0.1/cb'] };
    for (let i = 0; i < 20; i++) {
      expect((await register(t, body)).status).toBe(201);
    }
    const refused = await register(t, body);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('3600');
    expect(refused.json()).toEqual(
      refusal('invalid_request', 'too many registrations from this address; try again later'),
    );
    expect(await t.dataSource.getRepository(OAuthClient).count()).toBe(20);
    t.clock.advance(60 * 60 * 1000);
    expect((await register(t, body)).status).toBe(201);
  });
});

describe('OAuth server: registration with an initial access token', () => {
  let t: TestApp;
  let cwd: string;
  beforeAll(async () => {
    t = await createTestApp(
      await providerAppOptions('ES256', {
        OAuthServer__DynamicRegistration: 'initial-access-token',
      }),
    );
    cwd = mkdtempSync(join(tmpdir(), 'keygate-iat-'));
  });
  afterAll(async () => {
    await t.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  const body = { redirect_uris: ['http://127.0.0.1/cb'] };

  it('should refuse a registration without a token, or with an unknown one', async () => {
    const without = await register(t, body);
    expect(without.status).toBe(401);
    expect(without.json()).toEqual(refusal('invalid_token', 'no access token provided'));
    const unknown = await register(t, body, { authorization: 'Bearer kgiat_unknown' });
    expect(unknown.status).toBe(401);
    expect(unknown.json()).toEqual(refusal('invalid_token', 'invalid token provided'));
    expect(await t.dataSource.getRepository(OAuthClient).count()).toBe(0);
  });

  it('should register with a token the CLI printed once, stored only as its digest', async () => {
    const made = await runCliOn(
      t.database,
      ['oauth-clients:initial-access-token', '--expires-in', '2h'],
      cwd,
      t.environment,
    );
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    const token = /^initial_access_token: (kgiat_[A-Za-z0-9_-]{43})$/m.exec(made.stdout)?.[1] ?? '';
    expect(token).not.toBe('');
    const stored = await t.database.query<{ payload: string }>(
      `SELECT "payload" FROM "oauth_artefacts" WHERE "kind" = 'InitialAccessToken'`,
    );
    expect(JSON.stringify(stored)).not.toContain(token);

    const registered = await oidc.dynamicClientRegistration(
      new URL(t.baseUrl),
      { redirect_uris: ['http://127.0.0.1/callback'] },
      oidc.None(),
      { execute: [oidc.allowInsecureRequests], initialAccessToken: token },
    );
    const clientId = registered.clientMetadata().client_id;
    expect(clientId).toMatch(UUID);
    const listed = await runCliOn(t.database, ['oauth-clients:list'], cwd, t.environment);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`${clientId}  public self-registered  `);
  }, 240_000);

  it('should refuse a token once it expired', async () => {
    const { token } = await t.app.get(InitialAccessTokensService).create(60);
    expect((await register(t, body, { authorization: `Bearer ${token}` })).status).toBe(201);
    t.clock.advance(61 * 1000);
    const expired = await register(t, body, { authorization: `Bearer ${token}` });
    expect(expired.status).toBe(401);
    expect(expired.json()).toEqual(refusal('invalid_token', 'invalid token provided'));
  });
});

function configFor(t: TestApp, clientId: string): Promise<oidc.Configuration> {
  return oidc.discovery(new URL(t.baseUrl), clientId, undefined, oidc.None(), {
    execute: [oidc.allowInsecureRequests],
  });
}

interface Authorized {
  readonly browser: TestBrowser;
  readonly consent: Awaited<ReturnType<TestBrowser['open']>>;
  readonly callback: URL;
  readonly verifier: string;
  readonly state: string;
}

/** Signs in and consents on the hosted pages; the consent page and the callback. */
async function authorize(
  config: oidc.Configuration,
  redirect: string,
  email: string,
): Promise<Authorized> {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirect,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    scope: 'openid',
    state,
  });
  const browser = new TestBrowser();
  const signIn = await browser.follow(url, redirect);
  expect(signIn.status).toBe(200);
  const consent = await browser.submit(signIn, { email, password: DEFAULT_PASSWORD }, redirect);
  const back = await browser.submit(consent, { decision: 'approve' }, redirect);
  return { browser, consent, callback: back.url, verifier, state };
}

/** A second authorization in the same browser: the consent page, or the redirect back. */
async function authorizeInSession(
  config: oidc.Configuration,
  redirect: string,
  browser: TestBrowser,
) {
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirect,
    code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
    code_challenge_method: 'S256',
    scope: 'openid',
    state: oidc.randomState(),
  });
  return browser.follow(url, redirect);
}
