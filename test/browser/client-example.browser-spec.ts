import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { codeShownFor } from '../utils/page-code.js';
import { stopAllServers, type ServerProcess } from '../utils/spawn-server.js';
import { launchChromium } from './chromium.js';
import { serveClientOrigin, type ClientOrigin } from './front-end/client-origin.js';
import { startBrowserKeygate } from './keygate-server.js';

// The example page of @keygate/client (packages/client/example/index.html), the code that
// docs/web-front-ends.md shows, served from its own origin and driven in Debian's Chromium:
// a person logs in through its form, and every open tab shows it; a logout in any tab ends it
// everywhere.

const EXAMPLE = 'packages/client/example/index.html';

describe('The example page of @keygate/client', () => {
  let browser: Browser;
  let keygate: ServerProcess;
  let front: ClientOrigin;
  let context: BrowserContext;
  let directory: string;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'keygate-client-example-'));
    front = await serveClientOrigin(() => keygate.baseUrl);
    keygate = await startBrowserKeygate(directory, front.origin);
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

  /** What a tab shows: the form, or whose account. */
  async function shown(tab: Page) {
    return {
      form: await tab.locator('#login').isVisible(),
      account: await tab.locator('#account').isVisible(),
      name: await tab.locator('#name').textContent(),
      error: await tab.locator('#error').textContent(),
    };
  }

  async function openExample(): Promise<Page> {
    const tab = await context.newPage();
    await tab.goto(`${front.origin}/example/`);
    return tab;
  }

  it('should be the code docs/web-front-ends.md shows', () => {
    expect(codeShownFor('docs/web-front-ends.md', EXAMPLE, 'html')).toBe(
      readFileSync(new URL(`../../${EXAMPLE}`, import.meta.url), 'utf8'),
    );
  });

  it('should log in through its form, show the person in every tab, and log out everywhere', async () => {
    const email = `example-${Date.now()}@example.com`;
    const registered = await fetch(`${keygate.baseUrl}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'Ada', email, password: 'S3cure!pass' }),
    });
    expect(registered.status).toBe(201);
    const first = await openExample();
    const second = await openExample();

    await first.fill('input[name=email]', email);
    await first.fill('input[name=password]', 'Wr0ng!pass');
    await first.click('#login button');
    await first.locator('#error', { hasText: 'Credenciales inválidas.' }).waitFor();
    await first.fill('input[name=password]', 'S3cure!pass');
    await first.click('#login button');
    await second.locator('#account').waitFor({ state: 'visible' });
    await first.locator('#account').waitFor({ state: 'visible' });

    const signedIn = [await shown(first), await shown(second)];
    const third = await openExample();
    await third.locator('#account').waitFor({ state: 'visible' });
    const loadedLater = await shown(third);
    await second.click('#logout');
    for (const tab of [first, second, third]) {
      await tab.locator('#login').waitFor({ state: 'visible' });
    }

    const account = { form: false, account: true, name: 'Ada', error: 'Credenciales inválidas.' };
    expect(signedIn).toEqual([account, { ...account, error: '' }]);
    expect(loadedLater).toEqual({ ...account, error: '' });
    expect(await shown(first)).toEqual({ ...account, form: true, account: false, name: '' });
    expect(await shown(third)).toEqual({ form: true, account: false, name: '', error: '' });
  });
});
