import * as oidc from 'openid-client';
import { createUser, DEFAULT_PASSWORD } from './factories/user.factory.js';
import { createTestApp, type TestApp } from './utils/create-test-app.js';
import {
  csrfOf,
  freePort,
  providerAppOptions,
  registerClient,
  TestBrowser,
  type BrowserAnswer,
} from './utils/oauth-provider.js';
import { asymmetricSigning } from './utils/signing-keys.js';

// Issue 39, the negative cases at the HTTP level that test/oauth-provider-flow.e2e-spec.ts does not
// already hold (a wrong verifier and the tokens of one side at the other are there): a PKCE
// downgrade at the token endpoint, a code raced on two instances sharing one database, a tampered
// `iss`, a consent posted with another interaction's CSRF token, and the hosted pages' headers.
// SQLite by default; PostgreSQL with `node test/run-pg.mjs --skip-outage <this file>`.

const REDIRECT = 'https://app.example.com/callback';

let t: TestApp;
let second: TestApp;
beforeAll(async () => {
  t = await createTestApp(await providerAppOptions());
  // A second instance behind the same issuer (as behind a load balancer), on the same database.
  second = await createTestApp({
    port: await freePort(),
    environment: asymmetricSigning('ES256', {
      OAuthServer__Enabled: 'true',
      OAuthServer__Issuer: t.baseUrl,
    }),
    database: t.database,
  });
});
afterAll(async () => {
  await second?.close();
  await t?.close();
});

interface Flow {
  readonly clientId: string;
  readonly secret: string;
  readonly config: oidc.Configuration;
  readonly verifier: string;
  readonly challenge: string;
  readonly state: string;
  readonly nonce: string;
  readonly url: URL;
}

/** A confidential client (PKCE accepted) and an authorization URL with an S256 challenge. */
async function startFlow(): Promise<Flow> {
  const added = await registerClient(t, { name: 'App', redirectUris: [REDIRECT] });
  const secret = added.clientSecret ?? '';
  const config = await oidc.discovery(
    new URL(t.baseUrl),
    added.clientId,
    undefined,
    oidc.ClientSecretBasic(secret),
    { execute: [oidc.allowInsecureRequests] },
  );
  const verifier = oidc.randomPKCECodeVerifier();
  const challenge = await oidc.calculatePKCECodeChallenge(verifier);
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: 'openid',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
    nonce,
    prompt: 'consent',
  });
  return { clientId: added.clientId, secret, config, verifier, challenge, state, nonce, url };
}

/** Signs in on the hosted page; the consent page. */
async function consentPage(browser: TestBrowser, flow: Flow, email: string) {
  const signIn = await browser.follow(flow.url, REDIRECT);
  expect(signIn.status).toBe(200);
  const consent = await browser.submit(signIn, { email, password: DEFAULT_PASSWORD }, REDIRECT);
  expect(consent.status).toBe(200);
  return { signIn, consent };
}

/** The URL the browser is sent back to after sign-in and approval. */
async function callbackOf(flow: Flow, email: string): Promise<URL> {
  const browser = new TestBrowser();
  const { consent } = await consentPage(browser, flow, email);
  return (await browser.submit(consent, { decision: 'approve' }, REDIRECT)).url;
}

/** A raw token request for `code` at `app`, as a client that sends what it likes would send. */
async function redeem(app: TestApp, flow: Flow, code: string, verifier?: string) {
  const body = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT,
  });
  if (verifier !== undefined) {
    body.set('code_verifier', verifier);
  }
  const response = await app.request('/oauth/token', {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${flow.clientId}:${flow.secret}`).toString('base64')}`,
    },
    body: body.toString(),
  });
  return { status: response.status, body: response.json<Record<string, unknown>>() };
}

const INVALID_GRANT = {
  status: 400,
  body: { error: 'invalid_grant', error_description: 'grant request is invalid' },
};

describe('OAuth server refusals: a PKCE downgrade at the token endpoint', () => {
  it('should refuse a code issued for an S256 challenge without a verifier and with the challenge as a plain verifier', async () => {
    const user = await createUser(t);
    const flow = await startFlow();
    const code = (await callbackOf(flow, user.email)).searchParams.get('code') ?? '';

    expect(await redeem(t, flow, code)).toEqual(INVALID_GRANT);
    expect(await redeem(t, flow, code, flow.challenge)).toEqual(INVALID_GRANT);

    // A failed PKCE check does not consume the code (oidc-provider checks PKCE before it marks the
    // code used; docs/behaviour.md): its holder, with the verifier, still redeems it, once.
    const redeemed = await redeem(t, flow, code, flow.verifier);
    expect(redeemed.status).toBe(200);
    expect(redeemed.body).toMatchObject({ token_type: 'Bearer', id_token: expect.any(String) });
    expect(await redeem(t, flow, code, flow.verifier)).toEqual(INVALID_GRANT);
  });
});

describe('OAuth server refusals: a code raced on two instances', () => {
  it('should let exactly one of twenty simultaneous redemptions through, over HTTP on two instances sharing the database', async () => {
    const user = await createUser(t);
    const flow = await startFlow();
    const code = (await callbackOf(flow, user.email)).searchParams.get('code') ?? '';

    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        redeem(i % 2 === 0 ? t : second, flow, code, flow.verifier),
      ),
    );
    const accepted = outcomes.filter((o) => o.status === 200);
    expect(accepted).toHaveLength(1);
    for (const refused of outcomes.filter((o) => o.status !== 200)) {
      expect(refused).toEqual(INVALID_GRANT);
    }
    // The reuse revoked the grant: the access token the winner got is no longer active.
    const introspection = await oidc.tokenIntrospection(
      flow.config,
      accepted[0].body.access_token as string,
    );
    expect(introspection).toEqual({ active: false });
  });
});

describe('OAuth server refusals: RFC 9207 iss in authorization responses', () => {
  it('should send iss on success and on an error redirect, and openid-client should refuse an altered or missing one', async () => {
    const user = await createUser(t);
    const flow = await startFlow();
    const callback = await callbackOf(flow, user.email);
    expect(callback.searchParams.get('iss')).toBe(t.baseUrl);
    const checks = {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
    };

    for (const alter of [
      (url: URL) => url.searchParams.set('iss', 'https://evil.example.com'),
      (url: URL) => url.searchParams.set('iss', `${t.baseUrl}/`),
      (url: URL) => url.searchParams.delete('iss'),
    ]) {
      const tampered = new URL(callback);
      alter(tampered);
      await expect(
        oidc.authorizationCodeGrant(flow.config, tampered, checks),
      ).rejects.toMatchObject({ code: 'OAUTH_INVALID_RESPONSE' });
    }
    // Refused by the client before any token request: the code is still unused.
    const tokens = await oidc.authorizationCodeGrant(flow.config, callback, checks);
    expect(tokens.access_token).toEqual(expect.any(String));

    // An error redirect (the person denies) carries iss as well.
    const denied = await startFlow();
    const browser = new TestBrowser();
    const { consent } = await consentPage(browser, denied, user.email);
    const back = await browser.submit(consent, { decision: 'deny' }, REDIRECT);
    expect(Object.fromEntries(back.url.searchParams)).toEqual({
      error: 'access_denied',
      error_description: 'End-User aborted interaction',
      state: denied.state,
      iss: t.baseUrl,
    });
  });
});

describe('OAuth server refusals: the consent form and the hosted pages', () => {
  const FORM_REFUSED =
    'El formulario no es válido o caducó. Vuelva a cargar la página e inténtelo de nuevo.';

  it("should refuse a consent posted with the CSRF token of another person's interaction, changing nothing", async () => {
    // An attacker gets a valid token honestly, from an interaction of their own, and puts it in a
    // form posted from the victim's browser (the victim's interaction cookie goes with it).
    const victim = new TestBrowser();
    const { consent: victimConsent } = await consentPage(
      victim,
      await startFlow(),
      (await createUser(t)).email,
    );
    const attacker = new TestBrowser();
    const { consent: attackerConsent } = await consentPage(
      attacker,
      await startFlow(),
      (await createUser(t)).email,
    );
    expect(csrfOf(attackerConsent.text)).not.toBe(csrfOf(victimConsent.text));

    for (const [browser, page, foreign] of [
      [victim, victimConsent, attackerConsent],
      [attacker, attackerConsent, victimConsent],
    ] as const) {
      const refused = await browser.submit(page, { decision: 'approve' }, REDIRECT, {
        csrf: csrfOf(foreign.text),
      });
      expect(refused.status).toBe(403);
      expect(refused.headers.get('location')).toBeNull();
      expect(refused.text).toContain(FORM_REFUSED);
    }
    // Nothing was decided: each form, with its own token, still works.
    for (const [browser, page] of [
      [victim, victimConsent],
      [attacker, attackerConsent],
    ] as const) {
      const back = await browser.submit(page, { decision: 'approve' }, REDIRECT);
      expect(back.url.searchParams.get('code')).toEqual(expect.any(String));
    }
  });

  it('should serve the sign-in and consent pages unframeable, under a strict CSP, with HttpOnly SameSite=Lax cookies', async () => {
    const user = await createUser(t);
    const flow = await startFlow();
    const browser = new TestBrowser();
    const first = await fetch(flow.url, { redirect: 'manual' });
    const cookies = [...first.headers.getSetCookie()];
    const signIn = await browser.follow(flow.url, REDIRECT);
    const signedIn = await browser.open(
      new URL(
        (/<form method="post" action="([^"]+)"/.exec(signIn.text)?.[1] ?? '').replace(
          /&#x2F;/g,
          '/',
        ),
        signIn.url,
      ),
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          csrf: csrfOf(signIn.text),
          email: user.email,
          password: DEFAULT_PASSWORD,
        }).toString(),
      },
    );
    cookies.push(...signedIn.headers.getSetCookie());
    // Through the resumed authorization (where the browser session cookie is set) to consent.
    let consent = signedIn;
    while (consent.headers.get('location') !== null) {
      consent = await browser.open(new URL(consent.headers.get('location') ?? '', consent.url));
      cookies.push(...consent.headers.getSetCookie());
    }
    expect(consent.text).toContain('name="decision"');

    for (const page of [signIn, consent] as BrowserAnswer[]) {
      const csp = page.headers.get('content-security-policy') ?? '';
      expect(csp.split('; ')).toEqual(
        expect.arrayContaining(["default-src 'none'", "frame-ancestors 'none'"]),
      );
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(page.headers.get('cache-control')).toContain('no-store');
    }
    // The interaction cookies and the browser session's, set once the password is accepted.
    const names = cookies.map((cookie) => cookie.slice(0, cookie.indexOf('=')));
    expect(names).toEqual(
      expect.arrayContaining(['_interaction', '_interaction_resume', '_session']),
    );
    for (const cookie of cookies) {
      const flags = cookie.toLowerCase().split(/;\s*/);
      expect(flags).toEqual(expect.arrayContaining(['httponly', 'samesite=lax']));
      // The issuer is http on loopback: no Secure (a browser would drop such a cookie).
      expect(flags).not.toContain('secure');
    }
  });
});
