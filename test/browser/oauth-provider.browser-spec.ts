import { execFileSync } from 'node:child_process';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { registerUser, type RegisteredUser } from '../factories/user.factory.js';
import { createTestApp, type TestApp } from '../utils/create-test-app.js';
import { freePort, registerClient } from '../utils/oauth-provider.js';
import {
  PASSKEY_REGISTER_OPTIONS,
  PASSKEY_REGISTER_VERIFY,
  TOTP_CONFIRM,
  TOTP_ENROLL,
} from '../utils/routes.js';
import { asymmetricSigning } from '../utils/signing-keys.js';
import { launchChromium } from './chromium.js';
import { serveRelyingParty, type RelyingParty } from './front-end/relying-party.js';
import { addVirtualAuthenticator } from './passkey-browser.js';

// Issue 39: an application on another origin (http://127.0.0.1:<port>) signs people in with
// Keygate (http://localhost:<port>, a relying party id a passkey can have) through oidc-client-ts
// in Debian's Chromium, as a public client with PKCE, on Keygate's hosted pages: with a password,
// with a passkey of the CDP virtual authenticator, and with a password and the second factor;
// and the consent page neither renders in another origin's frame nor takes a form without its
// CSRF token. Keygate is the real listener on loopback.

const CONSENT_HEADING = 'Autorizar el acceso';

let t: TestApp;
let rp: RelyingParty;
let browser: Browser;
let issuer: string;
let clientId: string;

beforeAll(async () => {
  const port = await freePort();
  issuer = `http://localhost:${port}`;
  t = await createTestApp({
    port,
    environment: asymmetricSigning('ES256', {
      OAuthServer__Enabled: 'true',
      OAuthServer__Issuer: issuer,
      Passkeys__RpId: 'localhost',
      Passkeys__Origins: issuer,
      Mfa__EncryptionKeys: Buffer.alloc(32, 0x5c).toString('base64'),
    }),
  });
  rp = await serveRelyingParty();
  clientId = (
    await registerClient(t, {
      name: 'Aplicación de prueba',
      redirectUris: [rp.redirectUri],
      isPublic: true,
    })
  ).clientId;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await rp?.close();
  await t?.close();
});

/** A new tab whose console is kept (a refused frame is told there). */
async function newPage(): Promise<{ page: Page; console: string[] }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const lines: string[] = [];
  page.on('console', (message) => lines.push(message.text()));
  return { page, console: lines };
}

/** The application starts the sign-in; the browser lands on Keygate's sign-in page. */
async function startSignIn(page: Page, heading = 'Iniciar sesión'): Promise<void> {
  await page.goto(`${rp.origin}/`);
  await Promise.all([
    page.waitForURL(`${issuer}/oauth/interaction/**`),
    page.evaluate(
      `void window.startSignIn(${JSON.stringify(issuer)}, ${JSON.stringify(clientId)})`,
    ),
  ]);
  await page.getByRole('heading', { name: heading }).waitFor();
}

/** What the application's callback page made of the answer. */
interface SignInResult {
  readonly profile?: Record<string, unknown>;
  readonly idToken?: string;
  readonly userInfo?: { status: number; body: Record<string, unknown> };
  readonly error?: string;
}

/** Approves on the consent page; what the application's callback page holds then. */
async function approve(page: Page): Promise<SignInResult> {
  await page.getByRole('heading', { name: CONSENT_HEADING }).waitFor();
  await Promise.all([
    page.waitForURL(`${rp.redirectUri}?**`),
    page.getByRole('button', { name: 'Permitir' }).click(),
  ]);
  await page.waitForFunction("'signInResult' in window");
  return page.evaluate<SignInResult>('window.signInResult');
}

/** The ID token verifies with Keygate's published keys, for this client, about `user`. */
async function expectSignedIn(result: SignInResult, user: RegisteredUser, amr: string[]) {
  expect(result.error).toBeUndefined();
  expect(result.profile).toMatchObject({ sub: user.id, iss: issuer, aud: clientId });
  const jwks = (await t.get('/.well-known/jwks.json')).json<JSONWebKeySet>();
  const { payload } = await jwtVerify(result.idToken ?? '', createLocalJWKSet(jwks), {
    issuer,
    audience: clientId,
  });
  expect(payload.sub).toBe(user.id);
  // oidc-client-ts leaves amr out of its profile: read from the token itself.
  expect(payload.amr).toEqual(amr);
  expect(payload.azp ?? clientId).toBe(clientId);
  expect(result.userInfo).toEqual({
    status: 200,
    body: {
      sub: user.id,
      email: user.email,
      email_verified: false,
      name: user.username,
      preferred_username: user.username,
    },
  });
}

/** The TOTP code of `secret` at `at` (Debian's oathtool, RFC 6238). */
function totpAt(secret: string, at: Date): string {
  const seconds = Math.floor(at.getTime() / 1000);
  return execFileSync('oathtool', ['--totp', '-b', '-N', `@${seconds}`, secret], {
    encoding: 'utf8',
  }).trim();
}

/**
 * A passkey of the page's virtual authenticator for `user`, made on a page of Keygate's origin
 * (the relying party's), registered through the API as a front end does.
 */
async function registerBrowserPasskey(page: Page, user: RegisteredUser): Promise<void> {
  await page.goto(`${issuer}/.well-known/openid-configuration`);
  const options = await t.post(
    PASSKEY_REGISTER_OPTIONS,
    { password: user.password },
    user.accessToken,
  );
  const credential = await page.evaluate<unknown>(`(async () => {
      try {
        const credential = await navigator.credentials.create({
          publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(${options.text}),
        });
        return credential.toJSON();
      } catch (error) {
        return { error: String(error) };
      }
    })()`);
  const registered = await t.post(
    PASSKEY_REGISTER_VERIFY,
    { response: credential },
    user.accessToken,
  );
  expect(registered.status).toBe(201);
}

describe('Sign in with Keygate from another origin: oidc-client-ts in Chromium', () => {
  it('(a) should sign in with a password', async () => {
    const user = await registerUser(t);
    const { page } = await newPage();
    await startSignIn(page);
    await page.getByLabel('Correo electrónico').fill(user.email);
    await page.getByLabel('Contraseña').fill(user.password);
    await page.getByRole('button', { name: 'Iniciar sesión', exact: true }).click();
    await expectSignedIn(await approve(page), user, ['pwd']);
  });

  it('(b) should sign in with a passkey of the virtual authenticator', async () => {
    const user = await registerUser(t);
    const { page, console } = await newPage();
    await addVirtualAuthenticator(page);
    await registerBrowserPasskey(page, user);
    // The sign-in page asks for the passkeys of the e-mail field's autofill (conditional UI) as it
    // loads; the virtual authenticator answers at once, as a person picking the passkey there.
    const pages: string[] = [];
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) {
        pages.push(new URL(frame.url()).pathname);
      }
    });
    await startSignIn(page, CONSENT_HEADING);
    expect(pages.filter((path) => path.startsWith('/oauth/interaction/'))).toEqual([
      expect.stringMatching(/^\/oauth\/interaction\/[\w-]+$/),
      expect.stringMatching(/^\/oauth\/interaction\/[\w-]+$/),
    ]);
    await expectSignedIn(await approve(page), user, ['hwk', 'user']);
    expect(console.filter((line) => /Content Security Policy/i.test(line))).toEqual([]);
  });

  it('(b) should sign in with the passkey button where the browser has no passkey autofill', async () => {
    const user = await registerUser(t);
    const { page } = await newPage();
    await addVirtualAuthenticator(page);
    await registerBrowserPasskey(page, user);
    // A browser without conditional UI: the script leaves the autofill out; the button remains.
    await page.addInitScript(
      'PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false);',
    );
    await startSignIn(page);
    await page.getByRole('button', { name: 'Iniciar sesión con una llave de acceso' }).click();
    await expectSignedIn(await approve(page), user, ['hwk', 'user']);
  });

  it('(c) should sign in with a password and the second factor', async () => {
    const user = await registerUser(t);
    const enrolled = await t.post(TOTP_ENROLL, { password: user.password }, user.accessToken);
    const secret = enrolled.json<{ secret: string }>().secret;
    const confirmed = await t.post(
      TOTP_CONFIRM,
      { code: totpAt(secret, t.clock.now()) },
      user.accessToken,
    );
    expect(confirmed.status).toBe(200);
    // The next time step: the confirmation's code is spent.
    t.clock.advance(30_000);

    const { page } = await newPage();
    await startSignIn(page);
    await page.getByLabel('Correo electrónico').fill(user.email);
    await page.getByLabel('Contraseña').fill(user.password);
    await page.getByRole('button', { name: 'Iniciar sesión', exact: true }).click();
    await expect(page.getByRole('alert').first().textContent()).resolves.toBe(
      'Se requiere el código de verificación.',
    );
    // The code's field has the focus, and the alert is what describes the e-mail field.
    expect(await page.evaluate<string>('document.activeElement.id')).toBe('code');
    await page.getByLabel('Contraseña').fill(user.password);
    await page.getByLabel('Código de verificación').fill(totpAt(secret, t.clock.now()));
    await page.getByRole('button', { name: 'Iniciar sesión', exact: true }).click();
    await expectSignedIn(await approve(page), user, ['pwd', 'otp']);
  });

  it('(d) should not render the consent page in a frame of another origin, nor take its form without the csrf field', async () => {
    const user = await registerUser(t);
    const { page, console } = await newPage();
    await startSignIn(page);
    await page.getByLabel('Correo electrónico').fill(user.email);
    await page.getByLabel('Contraseña').fill(user.password);
    await page.getByRole('button', { name: 'Iniciar sesión', exact: true }).click();
    await page.getByRole('heading', { name: CONSENT_HEADING }).waitFor();
    const consentUrl = page.url();

    // The same browser (its cookies) frames the consent page on the application's origin.
    const framing = await page.context().newPage();
    const refusal = framing.waitForEvent('console', {
      predicate: (message) => message.text().includes("frame-ancestors 'none'"),
      timeout: 10_000,
    });
    await framing.goto(`${rp.origin}/frame?src=${encodeURIComponent(consentUrl)}`);
    expect((await refusal).text().trim()).toBe(
      `Framing '${issuer}/' violates the following Content Security Policy directive: "frame-ancestors 'none'". The request has been blocked.`,
    );
    const frame = framing.frames().find((candidate) => candidate !== framing.mainFrame());
    const framed = await frame
      ?.evaluate<string>("document.body ? document.body.innerText : ''")
      .catch(() => '');
    expect(framed ?? '').not.toContain(CONSENT_HEADING);
    expect(framed ?? '').not.toContain('Permitir');

    // The form without its csrf field: refused, and nothing was decided.
    await page.evaluate(`document.querySelector('input[name="csrf"]').remove()`);
    await page.getByRole('button', { name: 'Permitir' }).click();
    await page.getByRole('heading', { name: 'No se puede continuar' }).waitFor();
    expect(await page.getByRole('alert').textContent()).toBe(
      'El formulario no es válido o caducó. Vuelva a cargar la página e inténtelo de nuevo.',
    );
    expect(new URL(page.url()).origin).toBe(issuer);
    await page.goto(consentUrl);
    expect(await approve(page)).toMatchObject({ profile: { sub: user.id } });
    expect(console.filter((line) => /Content Security Policy/i.test(line))).toEqual([]);
  });
});
