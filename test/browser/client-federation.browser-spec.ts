import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { LinkedIdentityList } from '../../packages/client/dist/keygate-client.js';
import { startOidcProvider, type TestOidcProvider } from '../utils/federation-browser.js';
import { stopAllServers, type ServerProcess } from '../utils/spawn-server.js';
import { startTcpProxy, type TcpProxy } from '../utils/tcp-proxy.js';
import { launchChromium } from './chromium.js';
import { serveClientOrigin, type ClientOrigin } from './front-end/client-origin.js';
import { startBrowserKeygate } from './keygate-server.js';

// Sign-in through another identity provider (issue 38) in Debian's Chromium, with nothing
// simulated: a front end on its own origin (localhost, Keygate being on 127.0.0.1) loads the
// built @keygate/client, its "Continue with …" button calls signInWith(), the browser follows
// the real redirects to panva's oidc-provider, the person fills in the provider's own sign-in and
// consent pages, comes back through Keygate's callback, and completeSignIn() exchanges the code;
// the page shows the person from /api/auth/me. A second sign-in of the same person at the
// provider, in a fresh browser profile, opens the same account.

const PROVIDER_ID = 'test';
const PROVIDER_NAME = 'Proveedor de prueba';
const CLIENT_SECRET = 'secret-of-the-browser-test';
const PERSON = {
  sub: 'person-1',
  email: 'ana@example.com',
  email_verified: true,
  name: 'Ana Pérez',
  preferred_username: 'ana',
};
const STEP_TIMEOUT_MS = 15_000;

/** The page's globals as the evaluated code sees them (this project compiles without the DOM's types). */
interface PageGlobals {
  keygate: { identities(): Promise<LinkedIdentityList> };
}

describe('@keygate/client: sign-in through an OpenID provider in Chromium', () => {
  let directory: string;
  let provider: TestOidcProvider;
  let proxy: TcpProxy;
  let keygate: ServerProcess;
  let front: ClientOrigin;
  let browser: Browser;
  let frontEnd: string;
  let publicUrl: string;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'keygate-client-federation-'));
    // The provider must know Keygate's callback before Keygate starts, and Keygate the provider's
    // issuer: Keygate's public address is a relay whose target is filled in once Keygate listens.
    const keygateAddress = { host: '127.0.0.1', port: 0 };
    proxy = await startTcpProxy(keygateAddress);
    publicUrl = `http://127.0.0.1:${proxy.port}`;
    front = await serveClientOrigin(() => publicUrl);
    frontEnd = `${front.origin.replace('127.0.0.1', 'localhost')}/federation/`;
    provider = await startOidcProvider({
      clientId: 'keygate',
      clientSecret: CLIENT_SECRET,
      redirectUris: [`${publicUrl}/api/auth/federation/${PROVIDER_ID}/callback`],
      interactive: true,
    });
    await provider.nextLogin(PERSON);
    keygate = await startBrowserKeygate(directory, new URL(frontEnd).origin, {
      Federation__Providers: JSON.stringify([
        {
          id: PROVIDER_ID,
          name: PROVIDER_NAME,
          type: 'oidc',
          issuer: provider.issuer,
          clientId: 'keygate',
          clientSecret: CLIENT_SECRET,
        },
      ]),
      Federation__PublicUrl: publicUrl,
      Federation__RedirectUrls: frontEnd,
      Federation__AllowInsecureIssuers: 'true',
    });
    keygateAddress.port = keygate.port;
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await front?.close();
    await proxy?.close();
    await provider?.close();
    await stopAllServers();
    rmSync(directory, { recursive: true, force: true });
  });

  /**
   * The whole flow in a fresh browser profile (so the provider asks the person again): the
   * front end's button, the provider's pages, back to the front end. Gives the page and the
   * address of every document the tab loaded, redirects included.
   */
  async function signInThroughTheProvider(): Promise<{ page: Page; visited: URL[] }> {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    const visited: URL[] = [];
    page.on('request', (request) => {
      if (request.isNavigationRequest() && request.frame() === page.mainFrame()) {
        visited.push(new URL(request.url()));
      }
    });
    await page.goto(frontEnd);
    await page.locator('#outcome:not(:empty)').waitFor();
    expect(await page.locator('#outcome').textContent()).toBe('none');
    await page.getByRole('button', { name: `Continue with ${PROVIDER_NAME}` }).click();

    // The provider's own sign-in page (oidc-provider's), then its consent page.
    await page.waitForURL((url) => url.origin === provider.issuer);
    await page.locator('input[name="login"]').fill(PERSON.sub);
    await page.locator('input[name="password"]').fill('any password the provider takes');
    await page.getByRole('button', { name: 'Sign-in', exact: true }).click();
    await page.getByRole('button', { name: 'Continue', exact: true }).click();

    // Back at the front end, whose page says what completeSignIn() gave (or what was thrown).
    await page.waitForURL((url) => url.origin === new URL(frontEnd).origin);
    await page.locator('#outcome:not(:empty)').waitFor();
    return { page, visited };
  }

  async function shownUser(page: Page) {
    return {
      id: await page.locator('#account').getAttribute('data-user-id'),
      username: await page.locator('#name').textContent(),
      email: await page.locator('#email').textContent(),
      outcome: await page.locator('#outcome').textContent(),
      address: page.url(),
    };
  }

  it('should sign in through the provider with the real redirects, and open the same account the second time', async () => {
    const first = await signInThroughTheProvider();

    const user = await shownUser(first.page);
    expect(user).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      username: expect.stringMatching(/^ana/),
      email: PERSON.email,
      outcome: 'signed-in',
      // completeSignIn() took the one-time code out of the address bar.
      address: frontEnd,
    });
    // The browser went front end → Keygate → provider → Keygate's callback → front end, and the
    // code arrived at the front end's redirectTo.
    const keygatePaths = first.visited
      .filter((url) => url.origin === publicUrl)
      .map((url) => url.pathname);
    expect(keygatePaths).toEqual([
      `/api/auth/federation/${PROVIDER_ID}/authorize`,
      `/api/auth/federation/${PROVIDER_ID}/callback`,
    ]);
    expect(first.visited.some((url) => url.origin === provider.issuer)).toBe(true);
    const back = first.visited.at(-1);
    expect(back?.origin + (back?.pathname ?? '')).toBe(frontEnd);
    expect(back?.searchParams.get('code')).toEqual(expect.any(String));
    await first.page.context().close();

    // The same person at the provider again, in a new profile: the same account, one identity.
    const second = await signInThroughTheProvider();
    expect(await shownUser(second.page)).toEqual(user);
    const { identities } = await second.page.evaluate(() =>
      (globalThis as unknown as PageGlobals).keygate.identities(),
    );
    expect(identities).toEqual([
      {
        id: expect.any(String),
        provider: PROVIDER_ID,
        subject: PERSON.sub,
        email: PERSON.email,
        linkedAt: expect.any(String),
        lastUsedAt: expect.any(String),
      },
    ]);
    await second.page.context().close();
  });
});
