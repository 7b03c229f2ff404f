import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type * as KeygateModule from '../../packages/client/dist/keygate-client.js';
import { TEST_HASH_ITERATIONS, TEST_SECRET_KEY } from '../utils/create-test-app.js';
import { startServer, stopAllServers, type ServerProcess } from '../utils/spawn-server.js';
import { launchChromium } from './chromium.js';

// A single-page app on its own origin using Keygate through the browser's fetch, in Debian's
// Chromium driven by playwright-core. Nothing is intercepted: the browser itself sends the
// preflights and enforces CORS. The built service (dist/main.js) runs in production mode, with
// the page's origin in Cors__AllowedOrigins, or without it.

/** @keygate/client's built module (`npm run client:build`), which the page loads as it is. */
const CLIENT = readFileSync(
  new URL('../../packages/client/dist/keygate-client.js', import.meta.url),
  'utf8',
);

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Front end</title>
<script type="module">
  import { createKeygateClient } from './keygate-client.js';
  window.createKeygateClient = createKeygateClient;
</script></head>
<body><h1>A front end on its own origin</h1></body></html>`;

/**
 * The page's globals as the code evaluated in it sees them: the client module, and the storage
 * it keeps the refresh token in (this project compiles without the DOM's types).
 */
interface PageGlobals {
  readonly localStorage: { getItem(key: string): string | null };
  createKeygateClient: typeof KeygateModule.createKeygateClient;
}

/** What the page reports of each step: the status, or the error that stopped it. */
type Outcome = Record<string, unknown>;

/** The front end's flow, run inside the page; every call is a cross-origin fetch. */
async function frontEndFlow(baseUrl: string): Promise<Outcome> {
  const results: Outcome = {};
  const call = async (
    step: string,
    path: string,
    init: { method?: string; body?: unknown; token?: string; headers?: Record<string, string> },
  ): Promise<Record<string, unknown> | undefined> => {
    try {
      const response = await fetch(`${baseUrl}${path}`, {
        method: init.method ?? 'GET',
        headers: {
          ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...(init.token === undefined ? {} : { Authorization: `Bearer ${init.token}` }),
          ...init.headers,
        },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
      const body = (await response.json()) as Record<string, unknown>;
      results[step] = {
        status: response.status,
        requestId: response.headers.get('X-Request-Id') !== null,
        challenge: response.headers.get('WWW-Authenticate'),
        message: body.message ?? null,
      };
      return body;
    } catch (error: unknown) {
      results[step] = { blocked: error instanceof TypeError };
      return undefined;
    }
  };
  const email = `browser-${crypto.randomUUID()}@example.com`;
  const password = 'S3cure!pass';
  const registered = await call('register', '/api/auth/register', {
    method: 'POST',
    body: { username: 'browser', email, password },
  });
  const loggedIn = await call('login', '/api/auth/login', {
    method: 'POST',
    body: { email, password },
  });
  const access = loggedIn?.accessToken as string | undefined;
  await call('me', '/api/auth/me', { token: access });
  const refreshed = await call('refresh', '/api/auth/refresh', {
    method: 'POST',
    body: { refreshToken: loggedIn?.refreshToken },
  });
  const refreshToken = refreshed?.refreshToken as string | undefined;
  const token = refreshed?.accessToken as string | undefined;
  const sessions = await call('sessions', '/api/auth/sessions', {
    token,
    headers: { 'X-Refresh-Token': refreshToken ?? '' },
  });
  results.sessionCount = Array.isArray(sessions?.sessions) ? sessions.sessions.length : null;
  await call('logout', '/api/auth/revoke', {
    method: 'POST',
    token,
    body: { refreshToken, reason: 'logout' },
  });
  await call('refreshAfterLogout', '/api/auth/refresh', {
    method: 'POST',
    body: { refreshToken },
  });
  await call('anonymousMe', '/api/auth/me', {});
  // The account routes: a JSON POST and a DELETE with a body, each behind its own preflight.
  const newPassword = 'N3w!secure';
  await call('changePassword', '/api/auth/password/change', {
    method: 'POST',
    token,
    body: { currentPassword: password, newPassword },
  });
  await call('deleteAccount', '/api/auth/me', {
    method: 'DELETE',
    token,
    body: { password: newPassword },
  });
  await call('meAfterDelete', '/api/auth/me', { token });
  results.registeredUser = registered === undefined ? null : 'yes';
  results.email = email;
  return results;
}

describe('A web front end on another origin', () => {
  let browser: Browser;
  let pageServer: Server;
  let pageOrigin: string;
  const directories: string[] = [];

  async function startKeygate(allowedOrigins: string): Promise<ServerProcess> {
    const cwd = mkdtempSync(join(tmpdir(), 'keygate-browser-'));
    directories.push(cwd);
    return startServer({
      cwd,
      env: {
        NODE_ENV: 'production',
        Jwt__SecretKey: TEST_SECRET_KEY,
        PasswordHashing__Iterations: String(TEST_HASH_ITERATIONS),
        ConnectionStrings__DefaultConnection: join(cwd, 'keygate.db'),
        Cors__AllowedOrigins: allowedOrigins,
      },
    });
  }

  async function openPage(): Promise<{ page: Page; consoleErrors: string[] }> {
    const page = await browser.newPage();
    const consoleErrors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') {
        consoleErrors.push(message.text());
      }
    });
    await page.goto(`${pageOrigin}/`);
    return { page, consoleErrors };
  }

  beforeAll(async () => {
    pageServer = createServer((request, response) => {
      if (request.url === '/keygate-client.js') {
        response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(CLIENT);
      } else {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
      }
    });
    pageServer.listen(0, '127.0.0.1');
    await once(pageServer, 'listening');
    pageOrigin = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}`;
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    pageServer?.close();
    await stopAllServers();
    for (const directory of directories) {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('should register, log in, call /me, refresh, list sessions, log out, change the password and delete the account when its origin is allowed', async () => {
    const keygate = await startKeygate(`https://app.example.com,${pageOrigin}`);
    const { page } = await openPage();

    const results = await page.evaluate(frontEndFlow, keygate.baseUrl);

    const served = (status: number, message: string | null = null, challenge = null) => ({
      status,
      requestId: true,
      challenge,
      message,
    });
    expect(results).toEqual({
      register: served(201),
      login: served(200),
      me: served(200),
      refresh: served(200),
      sessions: served(200),
      sessionCount: 2,
      logout: served(200, 'Token revocado exitosamente.'),
      refreshAfterLogout: served(401, 'Refresh token revocado.'),
      anonymousMe: { ...served(401, 'Unauthorized'), challenge: 'Bearer' },
      changePassword: served(200, 'Contraseña actualizada exitosamente.'),
      deleteAccount: served(200, 'Cuenta eliminada exitosamente.'),
      meAfterDelete: served(404, 'Usuario no encontrado.'),
      registeredUser: 'yes',
      email: expect.any(String),
    });
  });

  it('should be blocked, and register nobody, when its origin is not allowed', async () => {
    const keygate = await startKeygate('https://app.example.com');
    const { page, consoleErrors } = await openPage();

    const results = await page.evaluate(frontEndFlow, keygate.baseUrl);

    const blocked = { blocked: true };
    expect(results).toEqual({
      register: blocked,
      login: blocked,
      me: blocked,
      refresh: blocked,
      sessions: blocked,
      sessionCount: null,
      logout: blocked,
      refreshAfterLogout: blocked,
      anonymousMe: blocked,
      changePassword: blocked,
      deleteAccount: blocked,
      meAfterDelete: blocked,
      registeredUser: null,
      email: expect.any(String),
    });
    expect(consoleErrors.some((text) => text.includes('blocked by CORS policy'))).toBe(true);
    // The preflight failed, so the registration never reached the service.
    const login = await fetch(`${keygate.baseUrl}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: results.email, password: 'S3cure!pass' }),
    });
    expect(login.status).toBe(401);
  });

  describe('@keygate/client from another origin', () => {
    let keygate: ServerProcess;
    let context: BrowserContext;

    beforeAll(async () => {
      keygate = await startKeygate(pageOrigin);
    });

    beforeEach(async () => {
      context = await browser.newContext();
    });

    afterEach(async () => {
      await context.close();
    });

    /** A tab of the front end, with the client module loaded. */
    async function openTab(): Promise<Page> {
      const page = await context.newPage();
      await page.goto(`${pageOrigin}/`);
      await page.waitForFunction(() => 'createKeygateClient' in globalThis);
      return page;
    }

    it('should keep the session across a reload, without a refresh', async () => {
      const tab = await openTab();
      const email = `reload-${Date.now()}@example.com`;
      await tab.evaluate(
        async ({ baseUrl, email }) => {
          const { createKeygateClient } = globalThis as unknown as PageGlobals;
          const client = createKeygateClient({ baseUrl, storage: 'local' });
          await client.register({ username: 'reload', email, password: 'S3cure!pass' });
        },
        { baseUrl: keygate.baseUrl, email },
      );
      const before = await tab.evaluate(() =>
        (globalThis as unknown as PageGlobals).localStorage.getItem('keygate.session'),
      );
      await tab.reload();
      await tab.waitForFunction(() => 'createKeygateClient' in globalThis);

      const me = await tab.evaluate(async (baseUrl) => {
        const { createKeygateClient } = globalThis as unknown as PageGlobals;
        return createKeygateClient({ baseUrl, storage: 'local' }).me();
      }, keygate.baseUrl);
      const after = await tab.evaluate(() =>
        (globalThis as unknown as PageGlobals).localStorage.getItem('keygate.session'),
      );

      expect(me).toEqual(expect.objectContaining({ email, username: 'reload' }));
      expect(after).toBe(before);
    });

    it('should let two tabs refresh at once without tripping reuse detection', async () => {
      const first = await openTab();
      const second = await openTab();
      await first.evaluate(async (baseUrl) => {
        const { createKeygateClient } = globalThis as unknown as PageGlobals;
        await createKeygateClient({ baseUrl, storage: 'local' }).register({
          username: 'tabs',
          email: `tabs-${Date.now()}@example.com`,
          password: 'S3cure!pass',
        });
      }, keygate.baseUrl);
      const refreshIn = (tab: Page) =>
        tab.evaluate(async (baseUrl) => {
          const { createKeygateClient } = globalThis as unknown as PageGlobals;
          const client = createKeygateClient({ baseUrl, storage: 'local' });
          const refreshed = await client.refresh().then(() => true);
          const me = await client.fetch(`${baseUrl}/api/auth/me`);
          return { refreshed, me: me.status };
        }, keygate.baseUrl);

      const results = await Promise.all([refreshIn(first), refreshIn(second)]);
      const later = await refreshIn(first);

      expect([...results, later]).toEqual([
        { refreshed: true, me: 200 },
        { refreshed: true, me: 200 },
        { refreshed: true, me: 200 },
      ]);
    });

    it('should log out: the refresh token is revoked and forgotten', async () => {
      const tab = await openTab();

      const outcome = await tab.evaluate(async (baseUrl) => {
        const { createKeygateClient, localStorage } = globalThis as unknown as PageGlobals;
        const client = createKeygateClient({ baseUrl, storage: 'local' });
        await client.register({
          username: 'logout',
          email: `logout-${Date.now()}@example.com`,
          password: 'S3cure!pass',
        });
        const stored = JSON.parse(localStorage.getItem('keygate.session') ?? '{}') as {
          refreshToken?: string;
        };
        await client.logout();
        const refreshedAfter = await client.refresh().then(
          () => 'refreshed',
          (error: { status: number; message: string }) => ({
            status: error.status,
            message: error.message,
          }),
        );
        const replay = await fetch(`${baseUrl}/api/auth/refresh`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ refreshToken: stored.refreshToken }),
        });
        return {
          storedAfter: localStorage.getItem('keygate.session'),
          token: await client.getAccessToken(),
          refreshedAfter,
          replay: replay.status,
        };
      }, keygate.baseUrl);

      expect(outcome).toEqual({
        storedAfter: null,
        token: null,
        refreshedAfter: { status: 401, message: 'Refresh token inválido.' },
        replay: 401,
      });
    });
  });
});
