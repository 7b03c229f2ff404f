import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import * as oidc from 'openid-client';
import { internalOrigin } from '../src/common/request-origin/request-origin.js';
import { RandomSource } from '../src/common/random/random-source.js';
import { KeysService } from '../src/keys/keys.service.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { execFileSync } from 'node:child_process';
import { createUser, DEFAULT_PASSWORD, registerUser } from './factories/user.factory.js';
import { TOTP_CONFIRM, TOTP_ENROLL } from './utils/routes.js';
import { createTestApp, type TestApp } from './utils/create-test-app.js';
import {
  providerAppOptions,
  registerClient,
  TestBrowser,
  type BrowserAnswer,
} from './utils/oauth-provider.js';

// Issue 39, part 2: a client nobody here wrote (openid-client 6) against the real listener on
// loopback, signing in on the hosted pages with plain HTTP requests. Needs Node 22 or later.

const REDIRECT = 'https://app.example.com/callback';
const CLIENT_NAME = '<b>Grafana</b> & "Co"';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp(
    await providerAppOptions('ES256', {
      Mfa__EncryptionKeys: Buffer.alloc(32, 9).toString('base64'),
    }),
  );
});
afterAll(async () => {
  await t.close();
});

interface Flow {
  readonly config: oidc.Configuration;
  readonly verifier: string;
  readonly state: string;
  readonly nonce: string;
  readonly url: URL;
}

async function confidentialClient(name = CLIENT_NAME) {
  const added = await registerClient(t, { name, redirectUris: [REDIRECT] });
  const config = await oidc.discovery(
    new URL(t.baseUrl),
    added.clientId,
    undefined,
    oidc.ClientSecretBasic(added.clientSecret ?? ''),
    { execute: [oidc.allowInsecureRequests] },
  );
  return { added, config };
}

async function startFlow(
  config: oidc.Configuration,
  scope = 'openid profile email offline_access',
): Promise<Flow> {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    prompt: 'consent',
  });
  return { config, verifier, state, nonce, url };
}

/** The TOTP code of `secret` at `at` (oathtool, RFC 6238). */
function totpAt(secret: string, at: Date): string {
  const seconds = Math.floor(at.getTime() / 1000);
  return execFileSync('oathtool', ['--totp', '-b', '-N', `@${seconds}`, secret], {
    encoding: 'utf8',
  }).trim();
}

/** Verifies an ID token with the keys /.well-known/jwks.json publishes now; its header. */
async function verifyWithPublishedKeys(idToken: string, audience: string) {
  const jwks = (await t.get('/.well-known/jwks.json')).json<JSONWebKeySet>();
  const { protectedHeader } = await jwtVerify(idToken, createLocalJWKSet(jwks), {
    issuer: t.baseUrl,
    audience,
  });
  return protectedHeader;
}

/** Signs in and consents on the hosted pages; the URL the browser is sent back to. */
async function signInAndConsent(
  browser: TestBrowser,
  flow: Flow,
  email: string,
  password = DEFAULT_PASSWORD,
): Promise<{ signIn: BrowserAnswer; consent: BrowserAnswer; callback: URL }> {
  const signIn = await browser.follow(flow.url, REDIRECT);
  expect(signIn.status).toBe(200);
  const consent = await browser.submit(signIn, { email, password }, REDIRECT);
  expect(consent.status).toBe(200);
  const back = await browser.submit(consent, { decision: 'approve' }, REDIRECT);
  return { signIn, consent, callback: back.url };
}

describe('OAuth server: a confidential client (openid-client) signs a person in', () => {
  it('should go through discovery, code + PKCE, ID token, UserInfo, refresh, revocation and introspection', async () => {
    const user = await createUser(t, { username: 'ana', email: 'ana@example.com' });
    const { added, config } = await confidentialClient();
    const flow = await startFlow(config);
    const browser = new TestBrowser();
    const { signIn, consent, callback } = await signInAndConsent(browser, flow, user.email);

    // The hosted pages.
    expect(signIn.headers.get('content-security-policy')).toBe(
      "default-src 'none'; base-uri 'none'; form-action 'self' https://app.example.com; frame-ancestors 'none'",
    );
    expect(signIn.text).toContain('name="email" type="email" autocomplete="username webauthn"');
    expect(signIn.text).toContain(
      'name="password" type="password" autocomplete="current-password"',
    );
    expect(signIn.text).toMatch(/<input type="hidden" name="csrf" value="[A-Za-z0-9_-]{43}">/);
    expect(consent.text).toContain('&lt;b&gt;Grafana&lt;&#x2F;b&gt; &amp; &quot;Co&quot;');
    expect(consent.text).not.toContain('<b>Grafana</b>');
    expect(consent.text).toContain('app.example.com');
    expect(consent.text).toContain('name="decision" value="approve"');
    expect(consent.text).toContain('name="decision" value="deny"');

    // RFC 9207: the issuer in the authorization response.
    expect(callback.searchParams.get('iss')).toBe(t.baseUrl);
    const tokens = await oidc.authorizationCodeGrant(flow.config, callback, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    expect(claims).toMatchObject({
      iss: t.baseUrl,
      sub: user.id,
      aud: added.clientId,
    });
    expect(tokens.refresh_token).toEqual(expect.any(String));

    // The ID token verifies against Keygate's published key set.
    const verified = await verifyWithPublishedKeys(tokens.id_token ?? '', added.clientId);
    expect(verified.alg).toBe('ES256');

    const userInfo = await oidc.fetchUserInfo(flow.config, tokens.access_token, user.id);
    expect(userInfo).toEqual({
      sub: user.id,
      email: 'ana@example.com',
      email_verified: false,
      name: 'ana',
      preferred_username: 'ana',
    });

    // Refresh rotates; the rotated token presented again revokes the whole grant.
    const refreshed = await oidc.refreshTokenGrant(flow.config, tokens.refresh_token ?? '');
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    await expect(
      oidc.refreshTokenGrant(flow.config, tokens.refresh_token ?? ''),
    ).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(
      oidc.refreshTokenGrant(flow.config, refreshed.refresh_token ?? ''),
    ).rejects.toMatchObject({ error: 'invalid_grant' });
    expect(await oidc.tokenIntrospection(flow.config, refreshed.access_token)).toEqual({
      active: false,
    });
  });
});

const REFUSED_PAGE =
  'La aplicación envió una solicitud que no se puede atender; no se le devuelve a ella.';

async function publicClient() {
  const added = await registerClient(t, {
    name: 'CLI',
    redirectUris: [REDIRECT],
    isPublic: true,
  });
  const config = await oidc.discovery(new URL(t.baseUrl), added.clientId, undefined, oidc.None(), {
    execute: [oidc.allowInsecureRequests],
  });
  return { added, config };
}

/** A code for `flow`, through the hosted pages. */
async function codeOf(flow: Flow, email: string): Promise<URL> {
  return (await signInAndConsent(new TestBrowser(), flow, email)).callback;
}

describe('OAuth server: a public client (openid-client) and RP-initiated logout', () => {
  const LOGGED_OUT = 'https://app.example.com/logged-out';

  it('should sign in a public client with PKCE and no secret, then end the browser session on logout', async () => {
    const user = await createUser(t);
    const added = await registerClient(t, {
      name: 'CLI',
      redirectUris: [REDIRECT],
      postLogoutRedirectUris: [LOGGED_OUT],
      isPublic: true,
    });
    const config = await oidc.discovery(
      new URL(t.baseUrl),
      added.clientId,
      undefined,
      oidc.None(),
      { execute: [oidc.allowInsecureRequests] },
    );
    const flow = await startFlow(config, 'openid email');
    const browser = new TestBrowser();
    const { callback } = await signInAndConsent(browser, flow, user.email);
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
    });
    expect(tokens.claims()?.sub).toBe(user.id);
    expect(tokens.refresh_token).toBeUndefined();

    // Signed in: a second authorization in this browser asks for no password, only consent
    // (the library always asks a native client's person: anyone can claim its client id).
    const again = await browser.follow((await startFlow(config, 'openid email')).url, REDIRECT);
    expect(again.text).toContain('<h1>Autorizar el acceso</h1>');

    const logout = await browser.follow(
      oidc.buildEndSessionUrl(config, {
        id_token_hint: tokens.id_token ?? '',
        post_logout_redirect_uri: LOGGED_OUT,
        state: 'bye',
      }),
      LOGGED_OUT,
    );
    expect(logout.status).toBe(200);
    expect(logout.headers.get('content-security-policy')).toBe(
      "default-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    );
    expect(logout.text).toContain('¿Cerrar la sesión de Keygate en este navegador?');
    const back = await browser.submit(logout, { logout: 'yes' }, LOGGED_OUT);
    expect(`${back.url.origin}${back.url.pathname}`).toBe(LOGGED_OUT);
    expect(back.url.searchParams.get('state')).toBe('bye');

    // Signed out: the next authorization asks for the password again.
    const after = await browser.follow((await startFlow(config, 'openid email')).url, REDIRECT);
    expect(after.text).toContain('<h1>Iniciar sesión</h1>');
  });
});

describe("OAuth server: the browser session ends with the account's Keygate sessions", () => {
  it('should ask for the password again once the Keygate sessions of the account are revoked', async () => {
    const user = await createUser(t);
    const { config } = await confidentialClient('App');
    const browser = new TestBrowser();
    await signInAndConsent(browser, await startFlow(config), user.email);

    // Still signed in: straight to the consent page (prompt=consent asks for it).
    const again = await browser.follow((await startFlow(config)).url, REDIRECT);
    expect(again.text).toContain('<h1>Autorizar el acceso</h1>');

    await t.app
      .get(TokensService)
      .revokeAll(user.id, internalOrigin('test', new RandomSource()), { reason: 'Logout all' });
    const after = await browser.follow((await startFlow(config)).url, REDIRECT);
    expect(after.text).toContain('<h1>Iniciar sesión</h1>');

    // A silent request is told so.
    const silentFlow = await startFlow(config, 'openid');
    const silentUrl = new URL(silentFlow.url);
    silentUrl.searchParams.set('prompt', 'none');
    const silent = await browser.follow(silentUrl, REDIRECT);
    expect(silent.url.searchParams.get('error')).toBe('login_required');
  });
});

describe('OAuth server: consents, remembered and withdrawn', () => {
  it('should remember a consent in another browser, list it, and end its tokens when it is withdrawn', async () => {
    const person = await registerUser(t);
    const { added, config } = await confidentialClient('Intranet');
    const flow = await startFlow(config);
    const { callback } = await signInAndConsent(new TestBrowser(), flow, person.email);
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
    });

    const listed = await t.get('/api/auth/oauth/grants', person.accessToken);
    expect({ status: listed.status, body: listed.json() }).toEqual({
      status: 200,
      body: {
        grants: [
          {
            clientId: added.clientId,
            clientName: 'Intranet',
            scopes: ['openid', 'profile', 'email', 'offline_access'],
            grantedAt: expect.any(String),
          },
        ],
      },
    });

    // Another browser, no prompt: the password, then straight back to the application.
    const silentFlow = await startFlow(config, 'openid email');
    const withoutPrompt = new URL(silentFlow.url);
    withoutPrompt.searchParams.delete('prompt');
    const browser = new TestBrowser();
    const signIn = await browser.follow(withoutPrompt, REDIRECT);
    const back = await browser.submit(
      signIn,
      { email: person.email, password: person.password },
      REDIRECT,
    );
    expect(back.url.searchParams.get('code')).toEqual(expect.any(String));

    const withdrawn = await t.request(`/api/auth/oauth/grants/${added.clientId}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${person.accessToken}` },
    });
    expect(withdrawn.status).toBe(204);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token ?? '')).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    expect(await oidc.tokenIntrospection(config, tokens.access_token)).toEqual({ active: false });
    expect((await t.get('/api/auth/oauth/grants', person.accessToken)).json()).toEqual({
      grants: [],
    });

    // Asked again.
    const againFlow = await startFlow(config, 'openid email');
    const again = new URL(againFlow.url);
    again.searchParams.delete('prompt');
    const page = await browser.follow(again, REDIRECT);
    expect(page.text).toContain('<h1>Autorizar el acceso</h1>');

    const unknown = await t.request(`/api/auth/oauth/grants/${added.clientId}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${person.accessToken}` },
    });
    expect({ status: unknown.status, message: unknown.json().message }).toEqual({
      status: 404,
      message: 'No ha autorizado a esa aplicación.',
    });
    expect((await t.get('/api/auth/oauth/grants')).status).toBe(401);
  });
});

describe('OAuth server: refusals', () => {
  it('should show an error page, and not redirect, for a redirect URI that is not registered', async () => {
    const { config } = await confidentialClient('App');
    const flow = await startFlow(config);
    for (const altered of [
      `${REDIRECT}/`,
      'https://evil.example.com/callback',
      `${REDIRECT}?x=1`,
    ]) {
      const url = new URL(flow.url);
      url.searchParams.set('redirect_uri', altered);
      const answer = await new TestBrowser().open(url);
      expect({ status: answer.status, location: answer.headers.get('location') }).toEqual({
        status: 400,
        location: null,
      });
      expect(answer.text).toContain(REFUSED_PAGE);
      expect(answer.headers.get('x-frame-options')).toBe('DENY');
    }
  });

  it('should refuse a public client without PKCE, and with plain PKCE, back at its redirect URI with iss', async () => {
    const { added } = await publicClient();
    const base = {
      client_id: added.clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid',
      state: 's',
    };
    const cases: [Record<string, string>, string][] = [
      [{}, 'Authorization Server policy requires PKCE to be used for this request'],
      [
        { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' },
        'not supported value of code_challenge_method',
      ],
    ];
    for (const [extra, description] of cases) {
      const answer = await new TestBrowser().open(
        `${t.baseUrl}/oauth/authorize?${new URLSearchParams({ ...base, ...extra }).toString()}`,
      );
      expect(answer.status).toBe(303);
      const back = new URL(answer.headers.get('location') ?? '');
      expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
      expect(Object.fromEntries(back.searchParams)).toEqual({
        error: 'invalid_request',
        error_description: description,
        state: 's',
        iss: t.baseUrl,
      });
    }
  });

  it('should refuse a wrong verifier, then the code used again, and revoke what the code gave', async () => {
    const user = await createUser(t);
    const { config } = await confidentialClient('App');
    const flow = await startFlow(config);
    const callback = await codeOf(flow, user.email);
    await expect(
      oidc.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: oidc.randomPKCECodeVerifier(),
        expectedState: flow.state,
        expectedNonce: flow.nonce,
      }),
    ).rejects.toMatchObject({ error: 'invalid_grant' });

    const flow2 = await startFlow(config);
    const callback2 = await codeOf(flow2, user.email);
    const checks = {
      pkceCodeVerifier: flow2.verifier,
      expectedState: flow2.state,
      expectedNonce: flow2.nonce,
    };
    const tokens = await oidc.authorizationCodeGrant(config, callback2, checks);
    await expect(oidc.authorizationCodeGrant(config, callback2, checks)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    expect(await oidc.tokenIntrospection(config, tokens.access_token)).toEqual({ active: false });
  });

  it('should let one of ten simultaneous redemptions of a code, and of a refresh token, through', async () => {
    const user = await createUser(t);
    const { config } = await confidentialClient('App');
    const flow = await startFlow(config);
    const callback = await codeOf(flow, user.email);
    const checks = {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
    };
    const redemptions = await Promise.allSettled(
      Array.from({ length: 10 }, () => oidc.authorizationCodeGrant(config, callback, checks)),
    );
    expect(redemptions.filter((r) => r.status === 'fulfilled')).toHaveLength(1);

    const flow2 = await startFlow(config);
    const tokens = await oidc.authorizationCodeGrant(config, await codeOf(flow2, user.email), {
      pkceCodeVerifier: flow2.verifier,
      expectedState: flow2.state,
      expectedNonce: flow2.nonce,
    });
    const refreshes = await Promise.allSettled(
      Array.from({ length: 10 }, () => oidc.refreshTokenGrant(config, tokens.refresh_token ?? '')),
    );
    expect(refreshes.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const refused of refreshes.filter((r) => r.status === 'rejected')) {
      expect(refused.reason).toMatchObject({ error: 'invalid_grant' });
    }
  });

  it("should refuse Keygate's own access token at /oauth/userinfo, and an OAuth access token at /api/auth/me", async () => {
    const person = await registerUser(t);
    const userInfo = await t.get('/oauth/userinfo', person.accessToken);
    expect(userInfo.status).toBe(401);
    expect(userInfo.json()).toEqual({
      error: 'invalid_token',
      error_description: 'invalid token provided',
    });

    const { config } = await confidentialClient('App');
    const flow = await startFlow(config);
    const tokens = await oidc.authorizationCodeGrant(config, await codeOf(flow, person.email), {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
    });
    const me = await t.get('/api/auth/me', tokens.access_token);
    expect({ status: me.status, body: me.json() }).toEqual({
      status: 401,
      body: { status: 401, message: 'Unauthorized' },
    });
  });

  it('should refuse a consent posted without its CSRF token or with another one, changing nothing', async () => {
    const user = await createUser(t);
    const { config } = await confidentialClient('App');
    const flow = await startFlow(config);
    const browser = new TestBrowser();
    const signIn = await browser.follow(flow.url, REDIRECT);
    const consent = await browser.submit(
      signIn,
      { email: user.email, password: DEFAULT_PASSWORD },
      REDIRECT,
    );
    for (const csrf of [null, 'A'.repeat(43)]) {
      const refused = await browser.submit(consent, { decision: 'approve' }, REDIRECT, { csrf });
      expect(refused.status).toBe(403);
      expect(refused.headers.get('location')).toBeNull();
      expect(refused.text).toContain(
        'El formulario no es válido o caducó. Vuelva a cargar la página e inténtelo de nuevo.',
      );
    }
    // The real form still works: nothing was decided.
    const back = await browser.submit(consent, { decision: 'approve' }, REDIRECT);
    expect(back.url.searchParams.get('code')).toEqual(expect.any(String));
  });

  it('should send a denial back as access_denied', async () => {
    const user = await createUser(t);
    const { config } = await confidentialClient('App');
    const flow = await startFlow(config);
    const browser = new TestBrowser();
    const signIn = await browser.follow(flow.url, REDIRECT);
    const consent = await browser.submit(
      signIn,
      { email: user.email, password: DEFAULT_PASSWORD },
      REDIRECT,
    );
    const back = await browser.submit(consent, { decision: 'deny' }, REDIRECT);
    expect(back.url.searchParams.get('error')).toBe('access_denied');
    expect(back.url.searchParams.get('iss')).toBe(t.baseUrl);
  });
});

describe('OAuth server: the sign-in page under the login rules', () => {
  it('should answer a wrong password, a deactivated account and a lockout with the interface messages', async () => {
    const { config } = await confidentialClient('App');
    const user = await createUser(t);
    const browser = new TestBrowser();
    const signIn = await browser.follow((await startFlow(config)).url, REDIRECT);

    const wrong = await browser.submit(
      signIn,
      { email: user.email, password: 'Wrong!pass1' },
      REDIRECT,
    );
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain(
      '<p id="error" role="alert" tabindex="-1">Credenciales inválidas.</p>',
    );
    expect(wrong.text).toContain(`value="${user.email}"`);

    for (let i = 0; i < 4; i++) {
      await browser.submit(signIn, { email: user.email, password: 'Wrong!pass1' }, REDIRECT);
    }
    const locked = await browser.submit(
      signIn,
      { email: user.email, password: DEFAULT_PASSWORD },
      REDIRECT,
    );
    expect(locked.status).toBe(401);
    expect(locked.text).toMatch(/Cuenta bloqueada temporalmente\. Intenta en 1[56] minuto\(s\)\./);

    const inactive = await createUser(t, { isActive: false });
    const refused = await browser.submit(
      signIn,
      { email: inactive.email, password: DEFAULT_PASSWORD },
      REDIRECT,
    );
    expect(refused.status).toBe(401);
    expect(refused.text).toContain('Cuenta desactivada.');
  });

  it("should refuse a form that breaks the login body's rules before checking anything", async () => {
    const { config } = await confidentialClient('App');
    const user = await createUser(t);
    const browser = new TestBrowser();
    const signIn = await browser.follow((await startFlow(config)).url, REDIRECT);
    // Five overlong ones: were they counted as failed logins, the account would be locked.
    for (const fields of [
      ...Array.from({ length: 5 }, () => ({ email: user.email, password: 'x'.repeat(1025) })),
      { email: `${user.email}\u0007`, password: DEFAULT_PASSWORD },
    ]) {
      const refused = await browser.submit(signIn, fields, REDIRECT);
      expect(refused.status).toBe(401);
      expect(refused.text).toContain('Credenciales inválidas.');
    }
    // None was counted: the right password still signs in.
    const consent = await browser.submit(
      signIn,
      { email: user.email, password: DEFAULT_PASSWORD },
      REDIRECT,
    );
    expect(consent.text).toContain('<h1>Autorizar el acceso</h1>');
  });

  it('should ask an account with a second factor for its code, and put both methods in amr', async () => {
    const person = await registerUser(t);
    const enrolled = await t.post(TOTP_ENROLL, { password: person.password }, person.accessToken);
    const secret = enrolled.json<{ secret: string }>().secret;
    const confirmed = await t.post(
      TOTP_CONFIRM,
      { code: totpAt(secret, t.clock.now()) },
      person.accessToken,
    );
    expect(confirmed.status).toBe(200);
    // The next time step: the confirmation's code is spent.
    t.clock.advance(30_000);

    const { added, config } = await confidentialClient('App');
    const flow = await startFlow(config, 'openid');
    const browser = new TestBrowser();
    const signIn = await browser.follow(flow.url, REDIRECT);
    const asked = await browser.submit(
      signIn,
      { email: person.email, password: person.password },
      REDIRECT,
    );
    expect(asked.status).toBe(401);
    expect(asked.text).toContain('Se requiere el código de verificación.');
    expect(asked.text).toContain(
      'name="code" type="text" inputmode="numeric" autocomplete="one-time-code"',
    );

    const wrongCode = await browser.submit(
      asked,
      { email: person.email, password: person.password, code: '000000' },
      REDIRECT,
    );
    expect(wrongCode.text).toContain('Código de verificación inválido.');

    const consent = await browser.submit(
      wrongCode,
      { email: person.email, password: person.password, code: totpAt(secret, t.clock.now()) },
      REDIRECT,
    );
    const back = await browser.submit(consent, { decision: 'approve' }, REDIRECT);
    const tokens = await oidc.authorizationCodeGrant(config, back.url, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
    });
    expect(tokens.claims()).toMatchObject({
      sub: person.id,
      aud: added.clientId,
      amr: ['pwd', 'otp'],
    });
  });

  it('should set the interaction cookies HttpOnly and SameSite=Lax', async () => {
    const { config } = await confidentialClient('App');
    const response = await fetch((await startFlow(config)).url, { redirect: 'manual' });
    const cookies = response.headers.getSetCookie();
    expect(cookies.length).toBeGreaterThan(0);
    for (const cookie of cookies) {
      expect(cookie.toLowerCase()).toContain('httponly');
      expect(cookie.toLowerCase()).toContain('samesite=lax');
    }
  });
});

describe('OAuth server: signing keys rotate without a restart', () => {
  const ORIGIN = internalOrigin('test', new RandomSource());
  /** Keys__PublicationLeadSeconds' default and the clock skew: when a next key starts signing. */
  const LEAD_MS = (300 + 30) * 1000;

  async function idTokenOf(flow: Flow, callback: URL): Promise<string> {
    const tokens = await oidc.authorizationCodeGrant(flow.config, callback, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
    });
    return tokens.id_token ?? '';
  }

  it('should sign with the next key once it is current, old ID tokens still verifying', async () => {
    const user = await createUser(t);
    const { added, config } = await confidentialClient('App');
    const firstFlow = await startFlow(config);
    const before = await idTokenOf(firstFlow, await codeOf(firstFlow, user.email));
    const oldKid = decodeProtectedHeader(before).kid;

    const next = await t.app.get(KeysService).rotate(ORIGIN);
    t.clock.advance(LEAD_MS);

    const flow = await startFlow(config);
    const after = await idTokenOf(flow, await codeOf(flow, user.email));
    expect((await verifyWithPublishedKeys(after, added.clientId)).kid).toBe(next.kid);
    expect(next.kid).not.toBe(oldKid);
    expect((await verifyWithPublishedKeys(before, added.clientId)).kid).toBe(oldKid);
  });

  it('should carry a sign-in in flight across an emergency retirement of the signing key', async () => {
    const user = await createUser(t);
    const { added, config } = await confidentialClient('App');
    const flow = await startFlow(config);
    const browser = new TestBrowser();
    const signIn = await browser.follow(flow.url, REDIRECT);
    const current = (await t.app.get(KeysService).list()).find(
      (key) => key.state === 'current' && key.source !== 'secret',
    );
    await t.app.get(KeysService).retire(current?.kid ?? '', ORIGIN);

    const consent = await browser.submit(
      signIn,
      { email: user.email, password: DEFAULT_PASSWORD },
      REDIRECT,
    );
    const back = await browser.submit(consent, { decision: 'approve' }, REDIRECT);
    const header = await verifyWithPublishedKeys(await idTokenOf(flow, back.url), added.clientId);
    const successor = (await t.app.get(KeysService).list()).find(
      (key) => key.state === 'current' && key.source !== 'secret',
    );
    expect(successor?.kid).not.toBe(current?.kid);
    expect(header.kid).toBe(successor?.kid);
  });
});
