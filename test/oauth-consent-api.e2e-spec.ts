import { randomUUID } from 'node:crypto';
import * as oidc from 'openid-client';
import { AdminKeysService } from '../src/admin/keys/admin-keys.service.js';
import { AppConfig } from '../src/config/app-config.js';
import { FormTokens } from '../src/oauth-server/pages/form-token.js';
import { RandomSource } from '../src/common/random/random-source.js';
import { internalOrigin } from '../src/common/request-origin/request-origin.js';
import { registerUser, type RegisteredUser } from './factories/user.factory.js';
import { auditRows } from './utils/audit-rows.js';
import { createTestApp, type TestApp, type TestResponse } from './utils/create-test-app.js';
import { errorBody, problemDetails, UNAUTHORIZED_BODY } from './utils/expected-bodies.js';
import {
  providerAppOptions,
  registerClient,
  TestBrowser,
  type BrowserAnswer,
} from './utils/oauth-provider.js';

// Issue 39: OAuthServer__ConsentUrl lets a team host its own consent page. Keygate sends the
// person there with a `consent_challenge`; the team's server reads the request and sends the
// decision through the admin API (scopes oauth-consents:read and oauth-consents:write), and the
// person's browser resumes the sign-in at the `redirectTo` it is given.

const REDIRECT = 'https://app.example.com/callback';
const CONSENT_URL = 'https://consent.example.com/keygate?tenant=a';
const REQUESTS = '/api/admin/oauth/consent-requests';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UNKNOWN_REQUEST = errorBody(
  404,
  'Solicitud de consentimiento no encontrada, caducada o ya resuelta.',
);

let t: TestApp;
let reader: string;
let writer: string;
beforeAll(async () => {
  t = await createTestApp(
    await providerAppOptions('ES256', { OAuthServer__ConsentUrl: CONSENT_URL }),
  );
  reader = await createKey(t, ['oauth-consents:read']);
  writer = await createKey(t, ['oauth-consents:write']);
});
afterAll(async () => {
  await t.close();
});

async function createKey(app: TestApp, scopes: readonly string[]): Promise<string> {
  const { secret } = await app.app
    .get(AdminKeysService)
    .create(
      `key-${randomUUID().slice(0, 8)}`,
      scopes,
      internalOrigin('cli', app.app.get(RandomSource)),
    );
  return secret;
}

function call(method: string, path: string, key: string | null): Promise<TestResponse> {
  return t.request(path, {
    method,
    headers: key === null ? {} : { authorization: `Bearer ${key}` },
  });
}

interface Flow {
  readonly config: oidc.Configuration;
  readonly verifier: string;
  readonly state: string;
  readonly url: URL;
  readonly clientId: string;
}

async function startFlow(scope = 'openid email', name = 'Grafana'): Promise<Flow> {
  const added = await registerClient(t, { name, redirectUris: [REDIRECT] });
  const config = await oidc.discovery(
    new URL(t.baseUrl),
    added.clientId,
    undefined,
    oidc.ClientSecretBasic(added.clientSecret ?? ''),
    { execute: [oidc.allowInsecureRequests] },
  );
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  return { config, verifier, state, url, clientId: added.clientId };
}

/** Signs in on the hosted page; answers where Keygate sends the browser next. */
async function signIn(
  browser: TestBrowser,
  flow: Flow,
  user: RegisteredUser,
): Promise<BrowserAnswer> {
  const page = await browser.follow(flow.url, REDIRECT);
  expect(page.status).toBe(200);
  return browser.submit(
    page,
    { email: user.email, password: user.password },
    'https://consent.example.com/',
  );
}

/** Signs in; the challenge the team's consent page is given. */
async function challengeFor(browser: TestBrowser, flow: Flow, user: RegisteredUser) {
  const sent = await signIn(browser, flow, user);
  expect(sent.url.origin + sent.url.pathname).toBe('https://consent.example.com/keygate');
  expect(sent.url.searchParams.get('tenant')).toBe('a');
  const challenge = sent.url.searchParams.get('consent_challenge');
  expect(challenge).toMatch(/^[A-Za-z0-9_-]{10,64}$/);
  return challenge as string;
}

describe('OAuth server: a team’s own consent page (OAuthServer__ConsentUrl)', () => {
  it('should send the signed-in person to the consent URL with the challenge, and the API should describe the request', async () => {
    const user = await registerUser(t);
    const flow = await startFlow('openid email');
    const challenge = await challengeFor(new TestBrowser(), flow, user);

    const read = await call('GET', `${REQUESTS}/${challenge}`, reader);
    expect({ status: read.status, body: read.json() }).toEqual({
      status: 200,
      body: {
        challenge,
        clientId: flow.clientId,
        clientName: 'Grafana',
        unverified: false,
        localOnly: false,
        returnHost: 'app.example.com',
        userId: user.id,
        email: user.email,
        scopes: ['openid', 'email'],
        resources: [],
        expiresAt: expect.stringMatching(ISO),
      },
    });
  });

  it('should let an approval resume the sign-in in the person’s browser, give the client its tokens and remember the consent', async () => {
    const user = await registerUser(t);
    const flow = await startFlow('openid email');
    const browser = new TestBrowser();
    const challenge = await challengeFor(browser, flow, user);

    const approved = await call('POST', `${REQUESTS}/${challenge}/approve`, writer);
    expect({ status: approved.status, body: approved.json() }).toEqual({
      status: 200,
      body: { redirectTo: `${t.baseUrl}/oauth/authorize/${challenge}` },
    });
    const back = await browser.follow(approved.json<{ redirectTo: string }>().redirectTo, REDIRECT);
    expect(back.url.href.startsWith(REDIRECT)).toBe(true);
    const tokens = await oidc.authorizationCodeGrant(flow.config, back.url, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
    });
    expect(tokens.claims()).toEqual(
      expect.objectContaining({ sub: user.id, aud: flow.clientId, iss: t.baseUrl }),
    );
    const rows = await auditRows(t.database, user.id);
    expect(rows.filter((row) => row.type === 'oauth_consent_granted')).toHaveLength(1);

    // Remembered: the next sign-in of the same client asks nothing and returns to it.
    const again = await startFlowFor(flow);
    const next = await browser.follow(again.url, REDIRECT);
    expect(next.url.href.startsWith(REDIRECT)).toBe(true);
    expect(next.url.searchParams.get('code')).not.toBeNull();
  });

  it('should let a denial return access_denied to the client, with the issuer', async () => {
    const user = await registerUser(t);
    const flow = await startFlow();
    const browser = new TestBrowser();
    const challenge = await challengeFor(browser, flow, user);

    const denied = await call('POST', `${REQUESTS}/${challenge}/deny`, writer);
    expect(denied.status).toBe(200);
    const back = await browser.follow(denied.json<{ redirectTo: string }>().redirectTo, REDIRECT);
    expect(Object.fromEntries(back.url.searchParams)).toEqual({
      error: 'access_denied',
      error_description: 'End-User aborted interaction',
      state: flow.state,
      iss: t.baseUrl,
    });
  });

  it('should answer a request once: a second decision, or reading a decided one, is 404', async () => {
    const user = await registerUser(t);
    const flow = await startFlow();
    const challenge = await challengeFor(new TestBrowser(), flow, user);
    expect((await call('POST', `${REQUESTS}/${challenge}/approve`, writer)).status).toBe(200);

    for (const [method, path, key] of [
      ['POST', `${REQUESTS}/${challenge}/approve`, writer],
      ['POST', `${REQUESTS}/${challenge}/deny`, writer],
      ['GET', `${REQUESTS}/${challenge}`, reader],
    ] as const) {
      const response = await call(method, path, key);
      expect({ status: response.status, body: response.json() }).toEqual({
        status: 404,
        body: UNKNOWN_REQUEST,
      });
    }
  });

  it('should answer 404 for an unknown challenge and for a request whose person has not signed in', async () => {
    const flow = await startFlow();
    const signInPage = await new TestBrowser().follow(flow.url, REDIRECT);
    const uid = /^\/oauth\/interaction\/([A-Za-z0-9_-]+)$/.exec(signInPage.url.pathname)?.[1];
    expect(uid).toBeDefined();

    for (const challenge of ['a'.repeat(21), uid as string]) {
      for (const [method, suffix, key] of [
        ['GET', '', reader],
        ['POST', '/approve', writer],
      ] as const) {
        const response = await call(method, `${REQUESTS}/${challenge}${suffix}`, key);
        expect({ status: response.status, body: response.json() }).toEqual({
          status: 404,
          body: UNKNOWN_REQUEST,
        });
      }
    }
  });

  it('should refuse a malformed challenge at the edge', async () => {
    const response = await call('GET', `${REQUESTS}/${'x'.repeat(65)}`, reader);
    expect({ status: response.status, body: response.json() }).toEqual({
      status: 400,
      body: problemDetails(['challenge']),
    });
  });

  it('should need an admin key with the right scope', async () => {
    const user = await registerUser(t);
    const challenge = await challengeFor(new TestBrowser(), await startFlow(), user);

    const anonymous = await call('POST', `${REQUESTS}/${challenge}/approve`, null);
    expect({ status: anonymous.status, body: anonymous.json() }).toEqual({
      status: 401,
      body: UNAUTHORIZED_BODY,
    });
    const readOnly = await call('POST', `${REQUESTS}/${challenge}/approve`, reader);
    expect(readOnly.status).toBe(403);
    const writeOnly = await call('GET', `${REQUESTS}/${challenge}`, writer);
    expect(writeOnly.status).toBe(403);
    // A person's own session token is not an admin key.
    const session = await call('GET', `${REQUESTS}/${challenge}`, user.accessToken);
    expect(session.status).toBe(401);
    // Nothing was decided by the refused calls.
    expect((await call('GET', `${REQUESTS}/${challenge}`, reader)).status).toBe(200);
  });

  it('should refuse the built-in consent form: the team’s page is the only way to consent', async () => {
    const user = await registerUser(t);
    const browser = new TestBrowser();
    const challenge = await challengeFor(browser, await startFlow(), user);
    // The form as Keygate's own page would carry it, with a valid token for this interaction:
    // only the consent URL setting refuses it.
    const csrf = new FormTokens(t.app.get(AppConfig).jwt.secret).of(challenge);

    const posted = await browser.open(`${t.baseUrl}/oauth/interaction/${challenge}/consent`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, decision: 'approve' }).toString(),
    });
    expect(posted.status).toBe(403);
    expect(posted.text).toContain(
      'El formulario no es válido o caducó. Vuelva a cargar la página e inténtelo de nuevo.',
    );
    expect((await call('GET', `${REQUESTS}/${challenge}`, reader)).status).toBe(200);
  });

  it('should complete a decision only in the browser that started the sign-in', async () => {
    const user = await registerUser(t);
    const flow = await startFlow();
    const challenge = await challengeFor(new TestBrowser(), flow, user);
    const approved = await call('POST', `${REQUESTS}/${challenge}/approve`, writer);

    const stranger = await new TestBrowser().follow(
      approved.json<{ redirectTo: string }>().redirectTo,
      REDIRECT,
    );
    expect(stranger.url.href.startsWith(REDIRECT)).toBe(false);
    expect(stranger.status).toBe(400);
  });
});

describe('OAuth server: the consent API when the provider is off', () => {
  it('should not exist', async () => {
    const off = await createTestApp();
    try {
      const key = await createKey(off, ['oauth-consents:read']);
      const response = await off.request(`${REQUESTS}/${'a'.repeat(21)}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect({ status: response.status, body: response.json() }).toEqual({
        status: 404,
        body: errorBody(404, 'Not Found'),
      });
    } finally {
      await off.close();
    }
  });
});

/** A second authorization request of the same client. */
async function startFlowFor(flow: Flow): Promise<Flow> {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(flow.config, {
    redirect_uri: REDIRECT,
    scope: 'openid email',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  return { ...flow, verifier, state, url };
}
