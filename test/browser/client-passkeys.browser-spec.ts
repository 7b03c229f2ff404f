import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type * as KeygateModule from '../../packages/client/dist/keygate-client.js';
import { timeStepAt, totpAt } from '../../src/two-factor/totp-codes.js';
import { decodeJwt } from '../utils/jwt.js';
import { stopAllServers, type ServerProcess } from '../utils/spawn-server.js';
import { launchChromium } from './chromium.js';
import { serveClientOrigin, type ClientOrigin } from './front-end/client-origin.js';
import { addVirtualAuthenticator, startPasskeyKeygate } from './passkey-browser.js';

// @keygate/client's passkeys in Debian's Chromium, with a virtual authenticator of the Chrome
// DevTools Protocol (a platform authenticator with resident keys and user verification): a page
// that loads the built module registers a passkey, signs out, signs in with
// signInWithPasskey() (the other tab of the origin adopts the session), uses the passkey as the
// second factor through login(), and is refused once the passkey is removed. The browser's own
// WebAuthn and JSON helpers do the ceremony; nothing is simulated. The page is on localhost (an
// IP address cannot be a relying party id), the origin Passkeys__Origins lists.

/** The page's globals as the evaluated code sees them (this project compiles without the DOM's types). */
interface PageGlobals {
  keygateModule: typeof KeygateModule;
  client: KeygateModule.KeygateClient;
  signedIn: boolean;
}

/** What a call in the page gave: its value, or the error's name, status and message. */
type Outcome<T> =
  | { value: T }
  | { error: { name: string; status?: number; message: string; isKeygateError: boolean } };

const PASSWORD = 'S3cure!pass';

describe('@keygate/client with passkeys in Chromium', () => {
  let browser: Browser;
  let keygate: ServerProcess;
  let front: ClientOrigin;
  let context: BrowserContext;
  let origin: string;
  let directory: string;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'keygate-client-passkeys-'));
    front = await serveClientOrigin(() => keygate.baseUrl);
    origin = front.origin.replace('127.0.0.1', 'localhost');
    keygate = await startPasskeyKeygate(directory, origin, origin);
    browser = await launchChromium();
    context = await browser.newContext();
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await front?.close();
    await stopAllServers();
    rmSync(directory, { recursive: true, force: true });
  });

  /** A tab of the front end with a client on storage 'local'. */
  async function openTab(): Promise<Page> {
    const tab = await context.newPage();
    await tab.goto(`${origin}/`);
    await tab.waitForFunction(() => 'keygateModule' in globalThis);
    await tab.evaluate((baseUrl) => {
      const page = globalThis as unknown as PageGlobals;
      page.signedIn = false;
      page.client = page.keygateModule.createKeygateClient({ baseUrl, storage: 'local' });
      page.client.onChange((state) => {
        page.signedIn = state !== null;
      });
    }, keygate.baseUrl);
    return tab;
  }

  /** A virtual platform authenticator for the tab, which WebAuthn answers only when focused. */
  async function withAuthenticator(tab: Page): Promise<void> {
    await tab.bringToFront();
    await addVirtualAuthenticator(tab);
  }

  /** Runs `client.<method>(argument)` in the tab and tells what came of it. */
  function inTab<T>(tab: Page, method: string, ...args: unknown[]): Promise<Outcome<T>> {
    return tab.evaluate(
      async ({ method, args }) => {
        const page = globalThis as unknown as PageGlobals;
        const client = page.client as unknown as Record<string, (...args: unknown[]) => unknown>;
        try {
          return { value: (await client[method](...args)) as T };
        } catch (error) {
          const failure = error as { name: string; status?: number; message: string };
          return {
            error: {
              name: failure.name,
              status: failure.status,
              message: failure.message,
              isKeygateError: error instanceof page.keygateModule.KeygateError,
            },
          };
        }
      },
      { method, args },
    );
  }

  async function value<T>(tab: Page, method: string, ...args: unknown[]): Promise<T> {
    const outcome = await inTab<T>(tab, method, ...args);
    if ('error' in outcome) {
      throw new Error(`${method} failed: ${JSON.stringify(outcome.error)}`);
    }
    return outcome.value;
  }

  it('should register a passkey, sign in with it alone, use it as the second factor of login(), and fail once it is removed', async () => {
    const tab = await openTab();
    const sibling = await openTab();
    await withAuthenticator(tab);
    const email = `client-passkey-${Date.now()}@example.com`;
    const { user } = await value<KeygateModule.AuthResponse>(tab, 'register', {
      username: 'passkeys',
      email,
      password: PASSWORD,
    });

    // registerPasskey(): Keygate's options, the browser's dialog, Keygate's check.
    const passkey = await value<KeygateModule.Passkey>(tab, 'registerPasskey', {
      password: PASSWORD,
      name: 'Chromium',
    });
    expect(passkey).toEqual({
      id: expect.any(String),
      name: 'Chromium',
      createdAt: expect.any(String),
      lastUsedAt: null,
      isBackupEligible: false,
      isBackedUp: false,
      transports: ['internal'],
    });
    expect(await value(tab, 'listPasskeys')).toEqual({ passkeys: [passkey] });

    // Signed out everywhere, then in again with the passkey alone: nothing typed.
    await value(tab, 'logout');
    await sibling.waitForFunction(() => !(globalThis as unknown as PageGlobals).signedIn);
    const signedIn = await value<KeygateModule.AuthResponse>(tab, 'signInWithPasskey');
    expect(signedIn.user).toEqual(user);
    expect(decodeJwt(signedIn.accessToken).payload.amr).toEqual(['hwk', 'user']);
    expect(await value(tab, 'getAccessToken')).toBe(signedIn.accessToken);
    expect(await value(tab, 'me')).toEqual(user);
    // The session is the origin's, as after login(): the other tab holds it too.
    await sibling.waitForFunction(() => (globalThis as unknown as PageGlobals).signedIn);
    expect(await value(sibling, 'getAccessToken')).toBe(signedIn.accessToken);
    expect(await value(tab, 'renamePasskey', passkey.id, { name: 'Portátil' })).toMatchObject({
      id: passkey.id,
      name: 'Portátil',
      lastUsedAt: expect.any(String),
    });

    // The second factor on: login() without a passkey is asked for it; with one, it signs.
    const { secret } = await value<KeygateModule.TotpEnrolment>(tab, 'enrollTotp', {
      password: PASSWORD,
    });
    const code = await totpAt(secret, timeStepAt(new Date()));
    await value(tab, 'confirmTotp', { code });
    await value(tab, 'logout');
    expect(await inTab(tab, 'login', { email, password: PASSWORD })).toEqual({
      error: {
        name: 'KeygateError',
        status: 401,
        message: 'Se requiere el código de verificación.',
        isKeygateError: true,
      },
    });
    const secondFactor = await value<KeygateModule.AuthResponse>(tab, 'login', {
      email,
      password: PASSWORD,
      passkey: true,
    });
    expect(secondFactor.user).toEqual(user);
    expect(decodeJwt(secondFactor.accessToken).payload.amr).toEqual(['pwd', 'hwk', 'user']);
    expect(await value(tab, 'getAccessToken')).toBe(secondFactor.accessToken);

    // A passkey as the proof for another: Keygate accepts the proof; the authenticator, which
    // already holds one for the account, refuses, and the browser's refusal arrives as it is.
    expect(await inTab(tab, 'registerPasskey', { passkey: true })).toEqual({
      error: {
        name: 'InvalidStateError',
        message: expect.any(String),
        isKeygateError: false,
      },
    });

    // Removed: the authenticator still offers it, Keygate no longer knows it.
    await value(tab, 'removePasskey', passkey.id);
    expect(await value(tab, 'listPasskeys')).toEqual({ passkeys: [] });
    await value(tab, 'logout');
    expect(await inTab(tab, 'signInWithPasskey')).toEqual({
      error: {
        name: 'KeygateError',
        status: 401,
        message: 'Llave de acceso no reconocida.',
        isKeygateError: true,
      },
    });
    expect(await value(tab, 'getAccessToken')).toBeNull();
  });

  it('should encode the ceremony itself where the browser has no JSON helpers, as older browsers', async () => {
    const tab = await openTab();
    await tab.evaluate(() => {
      const browser = globalThis as unknown as {
        PublicKeyCredential: {
          parseCreationOptionsFromJSON?: unknown;
          parseRequestOptionsFromJSON?: unknown;
          prototype: { toJSON?: unknown };
        };
      };
      delete browser.PublicKeyCredential.parseCreationOptionsFromJSON;
      delete browser.PublicKeyCredential.parseRequestOptionsFromJSON;
      delete browser.PublicKeyCredential.prototype.toJSON;
    });
    expect(
      await tab.evaluate(() => {
        const browser = globalThis as unknown as {
          PublicKeyCredential: { parseRequestOptionsFromJSON?: unknown; prototype: object };
        };
        return [
          'parseRequestOptionsFromJSON' in browser.PublicKeyCredential,
          'toJSON' in browser.PublicKeyCredential.prototype,
        ];
      }),
    ).toEqual([false, false]);
    await withAuthenticator(tab);
    const email = `client-passkey-fallback-${Date.now()}@example.com`;
    const { user } = await value<KeygateModule.AuthResponse>(tab, 'register', {
      username: 'fallback',
      email,
      password: PASSWORD,
    });

    const passkey = await value<KeygateModule.Passkey>(tab, 'registerPasskey', {
      password: PASSWORD,
    });
    await value(tab, 'logout');
    const signedIn = await value<KeygateModule.AuthResponse>(tab, 'signInWithPasskey');

    expect(passkey).toMatchObject({ name: 'Llave de acceso', transports: ['internal'] });
    expect(signedIn.user).toEqual(user);
    expect(decodeJwt(signedIn.accessToken).payload.amr).toEqual(['hwk', 'user']);
  });
});
