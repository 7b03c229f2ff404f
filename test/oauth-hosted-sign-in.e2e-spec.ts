import * as oidc from 'openid-client';
import { execFileSync } from 'node:child_process';
import { MailSender } from '../src/mail/mail-sender.js';
import { User } from '../src/users/entities/user.entity.js';
import { createUser, registerUser } from './factories/user.factory.js';
import { auditRows } from './utils/audit-rows.js';
import { createTestApp, type TestApp } from './utils/create-test-app.js';
import {
  providerAppOptions,
  registerClient,
  TestBrowser,
  type BrowserAnswer,
} from './utils/oauth-provider.js';
import {
  PASSKEY_REGISTER_OPTIONS,
  PASSKEY_REGISTER_VERIFY,
  TOTP_CONFIRM,
  TOTP_ENROLL,
} from './utils/routes.js';
import { useSmtpSink, type ReceivedMail } from './utils/smtp-sink.js';
import { SoftwareAuthenticator } from './utils/software-authenticator.js';

// Issue 39, the hosted sign-in page's other ways in: the mailed code (a real SMTP server, the
// code read from the mail) and a passkey (the software authenticator, posting what the page's
// script posts), under the rules and messages of their API routes; and the page when both are
// off. A client nobody here wrote (openid-client 6) starts and ends every flow.

const REDIRECT = 'https://app.example.com/callback';
const PASSKEY_RP_ID = 'example.com';
const PASSKEY_ORIGIN = 'https://id.example.com';

const REQUESTED = 'Si existe una cuenta con ese email, recibirás un código para iniciar sesión.';
const INVALID_CODE = 'Código inválido o expirado.';
const FORM_REFUSED =
  'El formulario no es válido o caducó. Vuelva a cargar la página e inténtelo de nuevo.';

interface Flow {
  readonly config: oidc.Configuration;
  readonly verifier: string;
  readonly state: string;
  readonly nonce: string;
  readonly url: URL;
}

async function clientOf(t: TestApp): Promise<{ clientId: string; config: oidc.Configuration }> {
  const added = await registerClient(t, { name: 'Intranet', redirectUris: [REDIRECT] });
  const config = await oidc.discovery(
    new URL(t.baseUrl),
    added.clientId,
    undefined,
    oidc.ClientSecretBasic(added.clientSecret ?? ''),
    { execute: [oidc.allowInsecureRequests] },
  );
  return { clientId: added.clientId, config };
}

async function startFlow(config: oidc.Configuration): Promise<Flow> {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: 'openid email',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  return { config, verifier, state, nonce, url };
}

/** Approves the consent page and redeems the code: the ID token's claims. */
async function approveAndRedeem(browser: TestBrowser, consent: BrowserAnswer, flow: Flow) {
  expect(consent.text).toContain('<h1>Autorizar el acceso</h1>');
  const back = await browser.submit(consent, { decision: 'approve' }, REDIRECT);
  const tokens = await oidc.authorizationCodeGrant(flow.config, back.url, {
    pkceCodeVerifier: flow.verifier,
    expectedState: flow.state,
    expectedNonce: flow.nonce,
  });
  return tokens.claims();
}

/** The `<p id="error" role="alert">` of a page, and the page's status. */
function refusalOf(page: BrowserAnswer): { status: number; alert: string | null } {
  return {
    status: page.status,
    alert: /<p id="error" role="alert" tabindex="-1">([^<]*)<\/p>/.exec(page.text)?.[1] ?? null,
  };
}

/** The TOTP code of `secret` at `at` (oathtool, RFC 6238). */
function totpAt(secret: string, at: Date): string {
  const seconds = Math.floor(at.getTime() / 1000);
  return execFileSync('oathtool', ['--totp', '-b', '-N', `@${seconds}`, secret], {
    encoding: 'utf8',
  }).trim();
}

describe('OAuth server: the hosted sign-in page with the mailed code and passkeys', () => {
  const sink = useSmtpSink();
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(
      await providerAppOptions('ES256', {
        Smtp__Url: sink.url,
        Smtp__From: 'Keygate <no-reply@keygate.test>',
        Mail__ResetPasswordUrl: 'https://app.example.com/reset-password?token={token}',
        Mail__VerifyEmailUrl: 'https://app.example.com/verify-email?token={token}',
        EmailCode__Enabled: 'true',
        EmailCode__LinkUrl: 'https://app.example.com/sign-in/email-code?token={token}',
        Mfa__EncryptionKeys: Buffer.alloc(32, 0x39).toString('base64'),
        Passkeys__RpId: PASSKEY_RP_ID,
        Passkeys__RpName: 'Keygate de prueba',
        Passkeys__Origins: PASSKEY_ORIGIN,
      }),
    );
  });
  afterAll(async () => {
    await t.close();
  });

  /** Presses "Recibir un código por correo" with `email`; the page, and the mail when one is due. */
  async function askForCode(browser: TestBrowser, signIn: BrowserAnswer, email: string) {
    const page = await browser.submit(signIn, { email }, REDIRECT, {
      action: '/email-code/send',
    });
    t.app.get(MailSender).wake();
    return page;
  }

  /** The code of the newest sign-in mail to `email` (a registered one has its verification mail). */
  async function mailedCodeTo(email: string): Promise<string> {
    for (let count = 1; count <= 3; count++) {
      const mails: ReceivedMail[] = await sink.waitFor(email, count);
      const code = mails
        .map((mail) => /^(\d{6})$/m.exec(mail.text)?.[1])
        .find((found) => found !== undefined);
      if (code !== undefined) {
        return code;
      }
    }
    throw new Error(`no code mailed to ${email}`);
  }

  it('should offer the mailed code and a passkey, with a script of its own origin only', async () => {
    const { config } = await clientOf(t);
    const signIn = await new TestBrowser().follow((await startFlow(config)).url, REDIRECT);
    expect(signIn.status).toBe(200);
    expect(signIn.headers.get('content-security-policy')).toBe(
      "default-src 'none'; script-src 'self'; base-uri 'none'; form-action 'self' https://app.example.com; frame-ancestors 'none'",
    );
    expect(signIn.headers.get('cache-control')).toBe('no-store');
    expect(signIn.text).toContain('autocomplete="username webauthn"');
    expect(signIn.text).toMatch(
      /<button type="submit" formaction="&#x2F;oauth&#x2F;interaction&#x2F;[\w-]+&#x2F;email-code&#x2F;send" formnovalidate>Recibir un código por correo<\/button>/,
    );
    expect(signIn.text).toContain(
      '<script src="&#x2F;oauth&#x2F;interaction&#x2F;assets&#x2F;passkey-sign-in.js" defer></script>',
    );
    expect(signIn.text).not.toMatch(/<script>|<script [^>]*>[^<]/);
    // Every form carries the interaction's token.
    const forms = signIn.text.match(/<form /g) ?? [];
    const tokens = signIn.text.match(/<input type="hidden" name="csrf" value="[\w-]{43}">/g) ?? [];
    expect(forms.length).toBe(2);
    expect(tokens.length).toBe(forms.length);

    const script = await fetch(`${t.baseUrl}/oauth/interaction/assets/passkey-sign-in.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await script.text()).toContain("mediation: 'conditional'");
  });

  it('should sign in with the mailed code, after a wrong one, with amr email', async () => {
    const user = await createUser(t);
    const { clientId, config } = await clientOf(t);
    const flow = await startFlow(config);
    const browser = new TestBrowser();
    const signIn = await browser.follow(flow.url, REDIRECT);

    const asked = await askForCode(browser, signIn, user.email);
    expect(asked.status).toBe(200);
    expect(asked.text).toContain(`<p id="notice" role="status">${REQUESTED}</p>`);
    expect(asked.text).toContain(
      'name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required autofocus',
    );
    expect(asked.text).toContain('<label for="code">Código recibido por correo</label>');
    const code = await mailedCodeTo(user.email);

    const wrong = await browser.submit(
      asked,
      { email: user.email, code: code === '000000' ? '111111' : '000000' },
      REDIRECT,
    );
    expect(refusalOf(wrong)).toEqual({ status: 401, alert: INVALID_CODE });
    expect(wrong.text).toContain('aria-describedby="error"');

    const consent = await browser.submit(wrong, { email: user.email, code }, REDIRECT);
    expect(await approveAndRedeem(browser, consent, flow)).toMatchObject({
      sub: user.id,
      aud: clientId,
      iss: t.baseUrl,
      amr: ['email'],
    });
    // Signed in, and the consent remembered: the next authorization goes straight back.
    const second = await browser.follow((await startFlow(config)).url, REDIRECT);
    expect(second.url.searchParams.get('code')).toEqual(expect.any(String));
  });

  it('should answer an unknown address as a known one, and an address that is none with its message', async () => {
    const { config } = await clientOf(t);
    const browser = new TestBrowser();
    const signIn = await browser.follow((await startFlow(config)).url, REDIRECT);
    const unknown = await askForCode(browser, signIn, 'nobody-here@example.com');
    expect(unknown.status).toBe(200);
    expect(unknown.text).toContain(`<p id="notice" role="status">${REQUESTED}</p>`);

    const none = await askForCode(browser, signIn, 'not an address');
    expect(refusalOf(none)).toEqual({
      status: 400,
      alert: 'Indique una dirección de correo electrónico válida.',
    });
    const typed = await browser.submit(
      unknown,
      { email: 'nobody-here@example.com', code: '123456' },
      REDIRECT,
    );
    expect(refusalOf(typed)).toEqual({ status: 401, alert: INVALID_CODE });
  });

  it('should ask an account with a second factor for its code after the mailed one, keeping the mailed code', async () => {
    const person = await registerUser(t);
    const enrolled = await t.post(TOTP_ENROLL, { password: person.password }, person.accessToken);
    const secret = enrolled.json<{ secret: string }>().secret;
    const confirmed = await t.post(
      TOTP_CONFIRM,
      { code: totpAt(secret, t.clock.now()) },
      person.accessToken,
    );
    expect(confirmed.status).toBe(200);
    t.clock.advance(30_000);

    const { config } = await clientOf(t);
    const flow = await startFlow(config);
    const browser = new TestBrowser();
    const signIn = await browser.follow(flow.url, REDIRECT);
    const asked = await askForCode(browser, signIn, person.email);
    const code = await mailedCodeTo(person.email);

    const factor = await browser.submit(asked, { email: person.email, code }, REDIRECT);
    expect(refusalOf(factor)).toEqual({
      status: 401,
      alert: 'Se requiere el código de verificación.',
    });
    expect(factor.text).toContain(`<input type="hidden" name="mailedCode" value="${code}">`);
    expect(factor.text).toContain('<label for="code">Código de verificación</label>');

    const wrong = await browser.submit(factor, { email: person.email, code: '000000' }, REDIRECT);
    expect(refusalOf(wrong)).toEqual({ status: 401, alert: 'Código de verificación inválido.' });

    const consent = await browser.submit(
      wrong,
      { email: person.email, code: totpAt(secret, t.clock.now()) },
      REDIRECT,
    );
    expect(await approveAndRedeem(browser, consent, flow)).toMatchObject({
      sub: person.id,
      amr: ['email', 'otp'],
    });
  });

  it('should refuse a locked-out account and a deactivated one with the interface messages', async () => {
    const { config } = await clientOf(t);
    const browser = new TestBrowser();
    const signIn = await browser.follow((await startFlow(config)).url, REDIRECT);

    const locked = await createUser(t);
    for (let i = 0; i < 5; i++) {
      await browser.submit(signIn, { email: locked.email, password: 'Wrong!pass1' }, REDIRECT);
    }
    const asked = await askForCode(browser, signIn, locked.email);
    const code = await mailedCodeTo(locked.email);
    const lockedOut = await browser.submit(asked, { email: locked.email, code }, REDIRECT);
    expect(lockedOut.status).toBe(401);
    expect(refusalOf(lockedOut).alert).toMatch(
      /^Cuenta bloqueada temporalmente\. Intenta en 1[56] minuto\(s\)\.$/,
    );

    const inactive = await createUser(t, { isActive: false });
    const askedInactive = await askForCode(browser, signIn, inactive.email);
    expect(askedInactive.text).toContain(REQUESTED);
    const deactivated = await browser.submit(
      askedInactive,
      { email: inactive.email, code: '123456' },
      REDIRECT,
    );
    expect(refusalOf(deactivated)).toEqual({ status: 401, alert: 'Cuenta desactivada.' });
  });

  describe('with a passkey', () => {
    /** What the page's script posts: the authenticator's answer to the page's options. */
    function assertionFor(page: BrowserAnswer, authenticator: SoftwareAuthenticator): string {
      const options = /data-options="([^"]+)"/.exec(page.text)?.[1];
      if (options === undefined) {
        throw new Error('no passkey options on the page');
      }
      const json = options
        .replace(/&quot;/g, '"')
        .replace(/&#x2F;/g, '/')
        .replace(/&#x3D;/g, '=')
        .replace(/&amp;/g, '&');
      return JSON.stringify(authenticator.get(JSON.parse(json) as { challenge: string }));
    }

    it('should sign in with a passkey, with the amr of a passkey', async () => {
      const authenticator = new SoftwareAuthenticator(PASSKEY_RP_ID, PASSKEY_ORIGIN);
      const person = await withPasskeyAccount(t, authenticator);
      const { clientId, config } = await clientOf(t);
      const flow = await startFlow(config);
      const browser = new TestBrowser();
      const signIn = await browser.follow(flow.url, REDIRECT);
      const consent = await browser.submit(
        signIn,
        { passkey: assertionFor(signIn, authenticator) },
        REDIRECT,
        { action: '/passkey' },
      );
      expect(await approveAndRedeem(browser, consent, flow)).toMatchObject({
        sub: person.id,
        aud: clientId,
        amr: ['hwk', 'user'],
      });
    });

    it("should refuse an unknown passkey, a used challenge, a deactivated account's passkey and a field that is no assertion", async () => {
      const stranger = new SoftwareAuthenticator(PASSKEY_RP_ID, PASSKEY_ORIGIN);
      stranger.create({ challenge: 'AAAA', user: { id: 'c29tZW9uZQ' } });
      const authenticator = new SoftwareAuthenticator(PASSKEY_RP_ID, PASSKEY_ORIGIN);
      const person = await withPasskeyAccount(t, authenticator);
      const { config } = await clientOf(t);
      const browser = new TestBrowser();
      const signIn = await browser.follow((await startFlow(config)).url, REDIRECT);
      const post = (page: BrowserAnswer, passkey: string) =>
        browser.submit(page, { passkey }, REDIRECT, { action: '/passkey' });

      const unknown = await post(signIn, assertionFor(signIn, stranger));
      expect(refusalOf(unknown)).toEqual({ status: 401, alert: 'Llave de acceso no reconocida.' });
      // The page's challenge was used up by that attempt.
      const reused = await post(signIn, assertionFor(signIn, authenticator));
      expect(refusalOf(reused)).toEqual({
        status: 401,
        alert: 'El desafío de la llave de acceso no es válido o ya se usó.',
      });
      for (const field of ['', 'not json', '{"response":1}', '[]']) {
        const refused = await post(unknown, field);
        expect(refusalOf(refused)).toEqual({
          status: 400,
          alert: 'No se pudo verificar la llave de acceso.',
        });
      }

      await t.dataSource.getRepository(User).update({ id: person.id }, { isActive: false });
      const deactivated = await post(unknown, assertionFor(unknown, authenticator));
      expect(refusalOf(deactivated)).toEqual({ status: 401, alert: 'Cuenta desactivada.' });
      const rows = await auditRows(t.database, person.id);
      expect(
        rows
          .filter((row) => row.type === 'passkey_ceremony_failed')
          .map((row) => (row.details as { reason?: string }).reason),
      ).toEqual(['deactivated']);
    });
  });

  it('should refuse each sign-in form posted without its CSRF token, and change nothing', async () => {
    const authenticator = new SoftwareAuthenticator(PASSKEY_RP_ID, PASSKEY_ORIGIN);
    const person = await withPasskeyAccount(t, authenticator);
    const { config } = await clientOf(t);
    const browser = new TestBrowser();
    const signIn = await browser.follow((await startFlow(config)).url, REDIRECT);
    const options = /data-options="([^"]+)"/.exec(signIn.text)?.[1] ?? '';
    const assertion = JSON.stringify(
      authenticator.get(JSON.parse(options.replace(/&quot;/g, '"')) as { challenge: string }),
    );

    const base = `${t.baseUrl}/oauth/interaction/${/&#x2F;oauth&#x2F;interaction&#x2F;([\w-]+)&#x2F;login/.exec(signIn.text)?.[1] ?? ''}`;
    for (const [action, fields] of [
      ['/login', { email: person.email, password: person.password }],
      ['/email-code/send', { email: person.email }],
      ['/email-code', { email: person.email, code: '123456' }],
      ['/passkey', { passkey: assertion }],
    ] as const) {
      for (const csrf of [null, 'A'.repeat(43)]) {
        const refused = await browser.open(`${base}${action}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ ...fields, ...(csrf === null ? {} : { csrf }) }).toString(),
        });
        expect({
          action,
          status: refused.status,
          location: refused.headers.get('location'),
        }).toEqual({ action, status: 403, location: null });
        expect(refused.text).toContain(FORM_REFUSED);
      }
    }
    // Nothing was mailed, and the passkey's challenge is still unused: with the token, it signs in.
    t.app.get(MailSender).wake();
    await t.app.get(MailSender).idle();
    expect(sink.to(person.email).filter((mail) => /^\d{6}$/m.test(mail.text))).toEqual([]);
    const consent = await browser.submit(signIn, { passkey: assertion }, REDIRECT, {
      action: '/passkey',
    });
    expect(consent.text).toContain('<h1>Autorizar el acceso</h1>');
  });
});

/** An account with a passkey of `authenticator`, registered through the API. */
async function withPasskeyAccount(t: TestApp, authenticator: SoftwareAuthenticator) {
  const person = await registerUser(t);
  const options = await t.post(
    PASSKEY_REGISTER_OPTIONS,
    { password: person.password },
    person.accessToken,
  );
  const registered = await t.post(
    PASSKEY_REGISTER_VERIFY,
    { response: authenticator.create(options.json()) },
    person.accessToken,
  );
  expect(registered.status).toBe(201);
  return person;
}

describe('OAuth server: the hosted sign-in page with the mailed code and passkeys off', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(await providerAppOptions('ES256'));
  });
  afterAll(async () => {
    await t.close();
  });

  it('should offer neither, load no script, and refuse their forms', async () => {
    const user = await createUser(t);
    const { config } = await clientOf(t);
    const browser = new TestBrowser();
    const signIn = await browser.follow((await startFlow(config)).url, REDIRECT);
    expect(signIn.headers.get('content-security-policy')).toBe(
      "default-src 'none'; base-uri 'none'; form-action 'self' https://app.example.com; frame-ancestors 'none'",
    );
    expect(signIn.text).not.toContain('<script');
    expect(signIn.text).not.toContain('formaction');
    expect(signIn.text).not.toContain('id="passkey"');

    const mailed = await browser.submit(signIn, { email: user.email }, REDIRECT, {
      action: '/login',
    });
    expect(refusalOf(mailed).status).toBe(400);
    const uid = /&#x2F;oauth&#x2F;interaction&#x2F;([\w-]+)&#x2F;login/.exec(signIn.text)?.[1];
    expect(uid).toEqual(expect.any(String));
    const csrf = /name="csrf" value="([^"]+)"/.exec(signIn.text)?.[1] ?? '';
    for (const [path, status, message] of [
      ['email-code/send', 404, 'El inicio de sesión con código por email no está activado.'],
      ['email-code', 404, 'El inicio de sesión con código por email no está activado.'],
      ['passkey', 503, 'Las llaves de acceso no están configuradas.'],
    ] as const) {
      const answer = await browser.open(`${t.baseUrl}/oauth/interaction/${uid ?? ''}/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf, email: user.email, code: '123456' }).toString(),
      });
      expect({ path, status: answer.status }).toEqual({ path, status });
      expect(answer.text).toContain(`<p role="alert">${message}</p>`);
    }
  });
});
