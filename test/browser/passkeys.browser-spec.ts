import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { timeStepAt, totpAt } from '../../src/two-factor/totp-codes.js';
import { decodeJwt } from '../utils/jwt.js';
import { stopAllServers, type ServerProcess } from '../utils/spawn-server.js';
import { launchChromium } from './chromium.js';
import { addVirtualAuthenticator, startPasskeyKeygate } from './passkey-browser.js';

// Passkeys in Debian's Chromium, driven by playwright-core, with a virtual authenticator of the
// Chrome DevTools Protocol (a platform authenticator with resident keys and user verification).
// The page calls the built service (dist/main.js, production mode) through the browser's fetch
// and the browser's own WebAuthn API and JSON helpers: nothing of the ceremony is simulated.
// The allowed page is on http://localhost:<port>; the other one on http://localhost:<other port>,
// another origin on the same relying party id (so the browser signs), which Passkeys__Origins
// does not list.

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Passkeys</title>
<script>
  window.kg = {
    async call(base, method, path, body, token) {
      const headers = {};
      if (body !== undefined) headers['content-type'] = 'application/json';
      if (token) headers.authorization = 'Bearer ' + token;
      const response = await fetch(base + path, {
        method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text === '' ? null : JSON.parse(text) };
    },
    async create(options) {
      try {
        const credential = await navigator.credentials.create({
          publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options),
        });
        return credential.toJSON();
      } catch (error) {
        return { error: error.name };
      }
    },
    async get(options) {
      try {
        const credential = await navigator.credentials.get({
          publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options),
        });
        return credential.toJSON();
      } catch (error) {
        return { error: error.name };
      }
    },
  };
</script></head>
<body><h1>Passkeys</h1><input autocomplete="username webauthn"></body></html>`;

const PASSWORD = 'S3cure!pass';

interface Answer {
  status: number;
  body: Record<string, unknown> | null;
}

describe('passkeys in Chromium with a virtual authenticator', () => {
  let browser: Browser;
  let pageServer: Server;
  let otherServer: Server;
  let port: number;
  let otherPort: number;
  let keygate: ServerProcess;
  let page: Page;
  let cwd: string;

  /** Runs `kg.<method>(...args)` in the page and answers its result. */
  function inPage<T>(method: string, ...args: unknown[]): Promise<T> {
    const list = args.map((arg) => (arg === undefined ? 'undefined' : JSON.stringify(arg)));
    return page.evaluate<T>(`kg.${method}(${list.join(', ')})`);
  }

  function call(method: string, path: string, body?: unknown, token?: string): Promise<Answer> {
    return inPage<Answer>('call', keygate.baseUrl, method, path, body, token);
  }

  async function signInWithPasskey(): Promise<Answer> {
    const options = await call('POST', '/api/auth/passkeys/login/options');
    expect(options.status).toBe(200);
    const assertion = await inPage<Record<string, unknown>>('get', options.body);
    expect(assertion.error).toBeUndefined();
    return call('POST', '/api/auth/passkeys/login/verify', { response: assertion });
  }

  beforeAll(async () => {
    const serve = async (): Promise<[Server, number]> => {
      const server = createServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      return [server, (server.address() as AddressInfo).port];
    };
    [pageServer, port] = await serve();
    [otherServer, otherPort] = await serve();
    cwd = mkdtempSync(join(tmpdir(), 'keygate-passkeys-'));
    keygate = await startPasskeyKeygate(
      cwd,
      `http://localhost:${port},http://localhost:${otherPort}`,
      `http://localhost:${port}`,
    );
    browser = await launchChromium();
    page = await browser.newPage();
    await addVirtualAuthenticator(page);
  });

  afterAll(async () => {
    await browser?.close();
    pageServer?.close();
    otherServer?.close();
    await stopAllServers();
    rmSync(cwd, { recursive: true, force: true });
  });

  it('should register a passkey, sign in with it alone, use it as a second factor, refuse another origin, and stop once removed', async () => {
    await page.goto(`http://localhost:${port}/`);
    const email = `passkey-${Date.now()}@example.com`;
    const registered = await call('POST', '/api/auth/register', {
      username: 'browser',
      email,
      password: PASSWORD,
    });
    expect(registered.status).toBe(201);
    const accessToken = registered.body?.accessToken as string;
    const refreshToken = registered.body?.refreshToken as string;

    // Register: options for the password, the browser's credential, Keygate's check.
    const options = await call(
      'POST',
      '/api/auth/passkeys/register/options',
      { password: PASSWORD },
      accessToken,
    );
    expect(options.status).toBe(200);
    const credential = await inPage<Record<string, unknown>>('create', options.body);
    expect(credential.error).toBeUndefined();
    const created = await call(
      'POST',
      '/api/auth/passkeys/register/verify',
      { response: credential, name: 'Chromium' },
      accessToken,
    );
    expect(created).toEqual({
      status: 201,
      body: {
        id: expect.any(String),
        name: 'Chromium',
        createdAt: expect.any(String),
        lastUsedAt: null,
        isBackupEligible: false,
        isBackedUp: false,
        transports: ['internal'],
      },
    });

    // Sign out, then sign in with the passkey alone: no e-mail, no password typed.
    const loggedOut = await call(
      'POST',
      '/api/auth/revoke',
      { refreshToken, reason: 'logout' },
      accessToken,
    );
    expect(loggedOut.status).toBe(200);
    const signedIn = await signInWithPasskey();
    expect(signedIn.status).toBe(200);
    expect(Object.keys(signedIn.body ?? {}).sort()).toEqual([
      'accessToken',
      'accessTokenExpiry',
      'refreshToken',
      'user',
    ]);
    expect(signedIn.body?.user).toEqual({
      id: registered.body?.user && (registered.body.user as { id: string }).id,
      username: 'browser',
      email,
      createdAt: expect.any(String),
    });
    expect(decodeJwt(signedIn.body?.accessToken as string).payload.amr).toEqual(['hwk', 'user']);
    const token = signedIn.body?.accessToken as string;

    // The passkey as the second step of a password login, once TOTP is on.
    const enrolled = await call('POST', '/api/auth/mfa/totp/enroll', { password: PASSWORD }, token);
    const secret = enrolled.body?.secret as string;
    const code = await totpAt(secret, timeStepAt(new Date()));
    expect((await call('POST', '/api/auth/mfa/totp/confirm', { code }, token)).status).toBe(200);
    const needsFactor = await call('POST', '/api/auth/login', { email, password: PASSWORD });
    expect(needsFactor.body?.message).toBe('Se requiere el código de verificación.');
    const requestOptions = await call('POST', '/api/auth/passkeys/login/options');
    const assertion = await inPage<Record<string, unknown>>('get', requestOptions.body);
    const secondStep = await call('POST', '/api/auth/login', {
      email,
      password: PASSWORD,
      passkey: assertion,
    });
    expect(secondStep.status).toBe(200);
    expect(decodeJwt(secondStep.body?.accessToken as string).payload.amr).toEqual([
      'pwd',
      'hwk',
      'user',
    ]);

    // A page on another origin of the same domain: the browser signs, Keygate refuses.
    await page.goto(`http://localhost:${otherPort}/`);
    const foreignOptions = await call('POST', '/api/auth/passkeys/login/options');
    const foreign = await inPage<Record<string, unknown>>('get', foreignOptions.body);
    expect(foreign.error).toBeUndefined();
    const refused = await call('POST', '/api/auth/passkeys/login/verify', { response: foreign });
    expect(refused).toEqual({
      status: 401,
      body: {
        status: 401,
        message: 'No se pudo verificar la llave de acceso.',
        timestamp: expect.any(String),
      },
    });

    // Removed: the authenticator still offers it, Keygate no longer knows it.
    await page.goto(`http://localhost:${port}/`);
    const id = (created.body as { id: string }).id;
    const removed = await call('DELETE', `/api/auth/passkeys/${id}`, undefined, token);
    expect(removed).toEqual({ status: 204, body: null });
    const afterRemoval = await signInWithPasskey();
    expect(afterRemoval).toEqual({
      status: 401,
      body: {
        status: 401,
        message: 'Llave de acceso no reconocida.',
        timestamp: expect.any(String),
      },
    });
  });
});
