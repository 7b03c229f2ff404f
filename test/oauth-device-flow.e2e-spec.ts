import { jest } from '@jest/globals';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import * as oidc from 'openid-client';
import {
  MAX_WRONG_USER_CODES,
  WRONG_USER_CODE_WINDOW_MS,
} from '../src/oauth-server/pages/device-pages.js';
import { createUser, DEFAULT_PASSWORD } from './factories/user.factory.js';
import { createTestApp, type TestApp } from './utils/create-test-app.js';
import {
  providerAppOptions,
  registerClient,
  TestBrowser,
  type BrowserAnswer,
} from './utils/oauth-provider.js';

// Issue 40, the device authorization grant (RFC 8628): openid-client asks for a device code and
// polls the token endpoint; the person types the user code on the hosted page, signs in and
// consents there with plain HTTP form posts.

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const CLIENT_NAME = '<b>Deploy</b> CLI';
/** Never reached: TestBrowser follows every redirect of the hosted pages. */
const NOWHERE = 'https://nowhere.invalid/';
const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;
const DEVICE_PAGE_POLICY =
  "default-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp(await providerAppOptions('ES256', { OAuthServer__DeviceFlow: 'true' }));
});
afterAll(async () => {
  await t.close();
});

async function deviceClient(grantTypes: string[] = ['device_code']) {
  const added = await registerClient(t, {
    name: CLIENT_NAME,
    redirectUris: grantTypes.includes('authorization_code') ? ['https://app.example.com/cb'] : [],
    isPublic: true,
    grantTypes,
  });
  const config = await oidc.discovery(new URL(t.baseUrl), added.clientId, undefined, oidc.None(), {
    execute: [oidc.allowInsecureRequests],
  });
  return { clientId: added.clientId, config };
}

/** One poll of the token endpoint, as a device makes it: the tokens, or the OAuth error code. */
async function poll(config: oidc.Configuration, deviceCode: string) {
  try {
    return {
      tokens: await oidc.genericGrantRequest(config, DEVICE_GRANT, { device_code: deviceCode }),
    };
  } catch (error: unknown) {
    if (error instanceof oidc.ResponseBodyError) {
      return { error: error.error, status: error.status };
    }
    throw error;
  }
}

/** The person types the user code and confirms it: the page after the confirmation. */
async function enterCode(browser: TestBrowser, userCode: string) {
  const codePage = await browser.open(`${t.baseUrl}/oauth/device`);
  expect(codePage.status).toBe(200);
  const confirm = await browser.submit(codePage, { user_code: userCode }, NOWHERE);
  expect(confirm.status).toBe(200);
  return confirm;
}

/** Types the code, confirms it, signs in: the consent page. */
async function signedInToConsent(browser: TestBrowser, userCode: string, email: string) {
  const confirm = await enterCode(browser, userCode);
  const signIn = await browser.submit(confirm, { confirm: 'yes' }, NOWHERE);
  expect(signIn.status).toBe(200);
  expect(signIn.text).toContain('name="password"');
  const consent = await browser.submit(signIn, { email, password: DEFAULT_PASSWORD }, NOWHERE);
  expect(consent.status).toBe(200);
  expect(consent.text).toContain('name="decision" value="approve"');
  return consent;
}

function alertOf(page: BrowserAnswer): string | undefined {
  return /<p (?:id="error" )?role="alert"[^>]*>([^<]*)<\/p>/.exec(page.text)?.[1];
}

describe('OAuth server: device authorization grant (RFC 8628)', () => {
  it('should list the device endpoint and grant in discovery', async () => {
    const metadata = (await t.get('/.well-known/openid-configuration')).json<
      Record<string, unknown>
    >();
    expect(metadata.device_authorization_endpoint).toBe(`${t.baseUrl}/oauth/device/auth`);
    expect(metadata.grant_types_supported).toContain(DEVICE_GRANT);
  });

  it('should sign a device in: pending, slow_down, the hosted pages, then tokens with azp', async () => {
    const user = await createUser(t, { email: 'dora@example.com' });
    const { clientId, config } = await deviceClient();
    const device = await oidc.initiateDeviceAuthorization(config, {
      scope: 'openid email offline_access',
    });
    expect(device).toEqual({
      device_code: expect.any(String),
      user_code: expect.stringMatching(USER_CODE),
      verification_uri: `${t.baseUrl}/oauth/device`,
      verification_uri_complete: `${t.baseUrl}/oauth/device?user_code=${device.user_code}`,
      expires_in: 600,
      interval: 5,
    });

    expect(await poll(config, device.device_code)).toEqual({
      error: 'authorization_pending',
      status: 400,
    });
    // At once again: faster than the interval.
    expect(await poll(config, device.device_code)).toEqual({ error: 'slow_down', status: 400 });
    // The interval is 10 seconds now: 10 seconds later the device is told to wait again.
    t.clock.advance(10_000);
    expect(await poll(config, device.device_code)).toEqual({
      error: 'authorization_pending',
      status: 400,
    });

    const browser = new TestBrowser();
    const codePage = await browser.open(`${t.baseUrl}/oauth/device`);
    expect(codePage.headers.get('content-security-policy')).toBe(DEVICE_PAGE_POLICY);
    expect(codePage.headers.get('x-frame-options')).toBe('DENY');
    expect(codePage.text).toContain('<html lang="es">');
    expect(codePage.text).toContain('<label for="user_code">Código del dispositivo</label>');
    expect(codePage.text).toMatch(/<input type="hidden" name="csrf" value="[0-9a-f]{48}">/);
    expect(codePage.text).not.toContain('<script');

    const confirm = await browser.submit(codePage, { user_code: device.user_code }, NOWHERE);
    expect(confirm.status).toBe(200);
    expect(confirm.headers.get('content-security-policy')).toBe(DEVICE_PAGE_POLICY);
    // The client's name is untrusted text: shown, never interpreted.
    expect(confirm.text).toContain(
      '<p>La aplicación <strong>&lt;b&gt;Deploy&lt;&#x2F;b&gt; CLI</strong> pide acceso desde un dispositivo.</p>',
    );
    expect(confirm.text).toContain(`<strong id="user-code">${device.user_code}</strong>`);

    const signIn = await browser.submit(confirm, { confirm: 'yes' }, NOWHERE);
    expect(signIn.status).toBe(200);
    expect(signIn.url.pathname).toMatch(/^\/oauth\/interaction\//);
    const consent = await browser.submit(
      signIn,
      { email: user.email, password: DEFAULT_PASSWORD },
      NOWHERE,
    );
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('&lt;b&gt;Deploy&lt;&#x2F;b&gt; CLI');
    // A device has no redirect URI: the page names no host to return to.
    expect(consent.text).not.toContain('Después volverá a');
    const done = await browser.submit(consent, { decision: 'approve' }, NOWHERE);
    expect(done.status).toBe(200);
    expect(done.url.pathname).toMatch(/^\/oauth\/device\//);
    expect(done.text).toContain(
      '<p role="status">&lt;b&gt;Deploy&lt;&#x2F;b&gt; CLI ya tiene acceso. Puede cerrar esta página y volver a su dispositivo.</p>',
    );

    t.clock.advance(10_000);
    const { tokens } = await poll(config, device.device_code);
    expect(tokens).toMatchObject({
      token_type: 'bearer',
      access_token: expect.any(String),
      refresh_token: expect.any(String),
      id_token: expect.any(String),
      scope: 'openid email offline_access',
    });
    const jwks = (await t.get('/.well-known/jwks.json')).json<JSONWebKeySet>();
    const { payload } = await jwtVerify(tokens!.id_token!, createLocalJWKSet(jwks), {
      issuer: t.baseUrl,
      audience: clientId,
    });
    expect(payload).toMatchObject({ sub: user.id, aud: clientId, azp: clientId });

    const refreshed = await oidc.refreshTokenGrant(config, tokens!.refresh_token!);
    expect(refreshed.access_token).toEqual(expect.any(String));
    // The device code is used: polling again gets no second set of tokens (and, as a replayed
    // code, ends the grant: the library's rule).
    expect(await poll(config, device.device_code)).toEqual({ error: 'invalid_grant', status: 400 });
    await expect(oidc.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
  });

  it('should prefill the code from verification_uri_complete on its own page, without a script', async () => {
    const { config } = await deviceClient();
    const device = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' });
    const browser = new TestBrowser();
    const page = await browser.open(device.verification_uri_complete!);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(DEVICE_PAGE_POLICY);
    expect(page.text).not.toContain('<script');
    expect(page.text).toContain(`value="${device.user_code}"`);
    // The browser sends the field as the page filled it.
    const confirm = await browser.submit(page, { user_code: device.user_code }, NOWHERE);
    expect(confirm.text).toContain(`<strong id="user-code">${device.user_code}</strong>`);
  });

  it('should tell the device access_denied when the person denies on the consent page', async () => {
    const user = await createUser(t, { email: 'dino@example.com' });
    const { config } = await deviceClient();
    const device = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' });
    const browser = new TestBrowser();
    const consent = await signedInToConsent(browser, device.user_code, user.email);
    const denied = await browser.submit(consent, { decision: 'deny' }, NOWHERE);
    expect(denied.status).toBe(200);
    expect(alertOf(denied)).toBe(
      'Se canceló la conexión del dispositivo. Puede cerrar esta página.',
    );
    expect(await poll(config, device.device_code)).toEqual({ error: 'access_denied', status: 400 });
  });

  it('should tell the device access_denied when the person cancels on the confirmation', async () => {
    const { config } = await deviceClient();
    const device = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' });
    const browser = new TestBrowser();
    const confirm = await enterCode(browser, device.user_code);
    const cancelled = await browser.submit(confirm, { abort: 'yes' }, NOWHERE);
    expect(cancelled.status).toBe(200);
    expect(alertOf(cancelled)).toBe(
      'Se canceló la conexión del dispositivo. Puede cerrar esta página.',
    );
    expect(await poll(config, device.device_code)).toEqual({ error: 'access_denied', status: 400 });
  });

  it('should tell the device expired_token, and the person the code is wrong, once it expired', async () => {
    const { config } = await deviceClient();
    const device = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' });
    const browser = new TestBrowser();
    const codePage = await browser.open(`${t.baseUrl}/oauth/device`);
    // Eleven minutes on, for Keygate's clock and for the library's, which reads Date.now.
    const later = Date.now() + 11 * 60 * 1000;
    t.clock.advance(11 * 60 * 1000);
    const now = jest.spyOn(Date, 'now').mockReturnValue(later);
    try {
      expect(await poll(config, device.device_code)).toEqual({
        error: 'expired_token',
        status: 400,
      });
      const refused = await browser.submit(codePage, { user_code: device.user_code }, NOWHERE);
      expect(refused.status).toBe(400);
      expect(alertOf(refused)).toBe(
        'El código no es válido, caducó o ya se usó. Compruébelo en su dispositivo e inténtelo de nuevo.',
      );
    } finally {
      now.mockRestore();
    }
  });

  it('should refuse the code form without its CSRF token', async () => {
    const { config } = await deviceClient();
    const device = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' });
    const browser = new TestBrowser();
    await browser.open(`${t.baseUrl}/oauth/device`);
    const posted = await browser.open(`${t.baseUrl}/oauth/device`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ user_code: device.user_code }).toString(),
    });
    expect(posted.status).toBe(400);
    expect(alertOf(posted)).toBe(
      'No se pudo completar la conexión del dispositivo. Vuelva a empezar desde el dispositivo.',
    );
    expect(posted.text).not.toContain(device.user_code);
    expect(await poll(config, device.device_code)).toEqual({
      error: 'authorization_pending',
      status: 400,
    });
  });

  it('should refuse a client not registered for the device grant', async () => {
    const { config } = await deviceClient(['authorization_code']);
    await expect(
      oidc.initiateDeviceAuthorization(config, { scope: 'openid' }),
    ).rejects.toMatchObject({
      error: 'invalid_request',
      error_description:
        'urn:ietf:params:oauth:grant-type:device_code is not allowed for this client',
      status: 400,
    });
  });

  it('should answer a wrong user code with 400, then refuse the address after too many (429)', async () => {
    // A window of its own: the wrong codes of the tests above (all from 127.0.0.1) are past.
    t.clock.advance(WRONG_USER_CODE_WINDOW_MS);
    const { config } = await deviceClient();
    const device = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' });
    const browser = new TestBrowser();
    let page = await browser.open(`${t.baseUrl}/oauth/device`);
    for (let attempt = 0; attempt < MAX_WRONG_USER_CODES; attempt++) {
      page = await browser.submit(page, { user_code: 'BBBB-BBBB' }, NOWHERE);
      expect(page.status).toBe(400);
      expect(alertOf(page)).toBe(
        'El código no es válido, caducó o ya se usó. Compruébelo en su dispositivo e inténtelo de nuevo.',
      );
    }
    // Even the right code is refused now, before it is looked up.
    const throttled = await browser.submit(page, { user_code: device.user_code }, NOWHERE);
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('content-security-policy')).toBe(DEVICE_PAGE_POLICY);
    expect(alertOf(throttled)).toBe(
      'Demasiados códigos incorrectos desde esta dirección. Espere unos minutos e inténtelo de nuevo.',
    );
    // The window over, the address may try again.
    t.clock.advance(WRONG_USER_CODE_WINDOW_MS);
    const confirm = await enterCode(browser, device.user_code);
    expect(confirm.text).toContain(`<strong id="user-code">${device.user_code}</strong>`);
  });
});

describe('OAuth server: device grant off (the default)', () => {
  let off: TestApp;
  beforeAll(async () => {
    off = await createTestApp(await providerAppOptions('ES256'));
  });
  afterAll(async () => {
    await off.close();
  });

  it('should not list it in discovery, serve its endpoint, nor accept its grant', async () => {
    const metadata = (await off.get('/.well-known/openid-configuration')).json<
      Record<string, unknown>
    >();
    expect(metadata).not.toHaveProperty('device_authorization_endpoint');
    expect(metadata.grant_types_supported).not.toContain(DEVICE_GRANT);
    const added = await registerClient(off, {
      name: 'CLI',
      redirectUris: [],
      isPublic: true,
      grantTypes: ['device_code'],
    });
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const authorization = await off.request('/oauth/device/auth', {
      method: 'POST',
      headers: form,
      body: new URLSearchParams({ client_id: added.clientId, scope: 'openid' }).toString(),
    });
    expect(authorization.status).toBe(404);
    const token = await off.request('/oauth/token', {
      method: 'POST',
      headers: form,
      body: new URLSearchParams({
        grant_type: DEVICE_GRANT,
        device_code: 'x',
        client_id: added.clientId,
      }).toString(),
    });
    expect({ status: token.status, body: token.json() }).toEqual({
      status: 400,
      body: {
        error: 'unsupported_grant_type',
        error_description: 'unsupported grant_type requested',
      },
    });
  });
});
