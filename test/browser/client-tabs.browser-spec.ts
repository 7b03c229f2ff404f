import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import type * as KeygateModule from '../../packages/client/dist/keygate-client.js';
import { stopAllServers, type ServerProcess } from '../utils/spawn-server.js';
import { launchChromium } from './chromium.js';
import { serveClientOrigin, type ClientOrigin } from './front-end/client-origin.js';
import { startBrowserKeygate } from './keygate-server.js';

// @keygate/client in Debian's Chromium: five tabs of one origin sharing one session (storage
// 'local'), refreshing together and repeatedly against the built service; its audit trail
// counts the reuse detections. The same scenario without coordination (the test-only switch)
// must show some, or these tests could not fail.

/** The page's globals as the evaluated code sees them (this project compiles without the DOM's types). */
interface TabGlobals {
  keygateModule: typeof KeygateModule;
  client: KeygateModule.KeygateClient;
  signedIn: boolean;
}

const PASSWORD = 'S3cure!pass';
const TABS = 5;

describe('@keygate/client in five tabs of one origin', () => {
  let browser: Browser;
  /** The service on its defaults (no retry window), and one with the retry window on. */
  let keygate: ServerProcess;
  let retrying: ServerProcess;
  let front: ClientOrigin;
  let context: BrowserContext;
  const directories = new Map<ServerProcess, string>();

  /** The built service on a database file of its own, allowing the front end's origin. */
  async function startKeygate(env: Record<string, string> = {}): Promise<ServerProcess> {
    const directory = mkdtempSync(join(tmpdir(), 'keygate-client-tabs-'));
    const server = await startBrowserKeygate(directory, front.origin, env);
    directories.set(server, directory);
    return server;
  }

  beforeAll(async () => {
    front = await serveClientOrigin(() => keygate.baseUrl);
    keygate = await startKeygate();
    retrying = await startKeygate({ Jwt__RefreshRetryWindowSeconds: '30' });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await front?.close();
    await stopAllServers();
    for (const directory of directories.values()) {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  beforeEach(async () => {
    context = await browser.newContext();
  });

  afterEach(async () => {
    await context.close();
  });

  /** Audit events of one account by type, read from the service's database file. */
  function auditCounts(userId: string, server = keygate): Record<string, number> {
    const database = new Database(join(directories.get(server) ?? '', 'keygate.db'), {
      readonly: true,
    });
    try {
      const rows = database
        .prepare(
          'SELECT "type", count(*) AS "n" FROM "auth_events" WHERE "userId" = ? GROUP BY "type"',
        )
        .all(userId) as { type: string; n: number }[];
      return Object.fromEntries(rows.map(({ type, n }) => [type, n]));
    } finally {
      database.close();
    }
  }

  /** Tabs of one origin, each with a client on storage 'local' (and the coordination given). */
  async function openTabs(
    count: number,
    coordination?: KeygateModule.Coordination,
    server = keygate,
  ): Promise<Page[]> {
    const tabs: Page[] = [];
    for (let index = 0; index < count; index += 1) {
      const tab = await context.newPage();
      await tab.goto(`${front.origin}/`);
      await tab.waitForFunction(() => 'keygateModule' in globalThis);
      await tab.evaluate(
        ({ baseUrl, coordination }) => {
          const tab = globalThis as unknown as TabGlobals;
          tab.signedIn = false;
          tab.client = tab.keygateModule.createKeygateClient({
            baseUrl,
            storage: 'local',
            ...(coordination === undefined ? {} : { testOnly: { coordination } }),
          });
          tab.client.onChange((state) => {
            tab.signedIn = state !== null;
          });
        },
        { baseUrl: server.baseUrl, coordination },
      );
      tabs.push(tab);
    }
    return tabs;
  }

  /** Registers in the first tab and waits until every tab holds the session; the user's id. */
  async function registerIn(tabs: Page[], email: string): Promise<string> {
    const userId = await tabs[0].evaluate(
      async ({ email, password }) => {
        const { user } = await (globalThis as unknown as TabGlobals).client.register({
          username: 'tabs',
          email,
          password,
        });
        return user.id;
      },
      { email, password: PASSWORD },
    );
    for (const tab of tabs) {
      await tab.waitForFunction(() => (globalThis as unknown as TabGlobals).signedIn);
    }
    return userId;
  }

  /** Every tab refreshes `rounds` times, all at once; what each saw (refreshes and failures). */
  function refreshTogether(tabs: Page[], rounds: number) {
    return Promise.all(
      tabs.map((tab) =>
        tab.evaluate(async (rounds) => {
          const { client } = globalThis as unknown as TabGlobals;
          const outcome = { refreshed: 0, failures: [] as string[] };
          for (let round = 0; round < rounds; round += 1) {
            try {
              await client.refresh();
              outcome.refreshed += 1;
            } catch (error: unknown) {
              outcome.failures.push((error as Error).message);
            }
          }
          return outcome;
        }, rounds),
      ),
    );
  }

  /** What each tab holds afterwards: signed in, and `me` through its own access token. */
  function stateOfTabs(tabs: Page[]) {
    return Promise.all(
      tabs.map((tab) =>
        tab.evaluate(async () => {
          const { client, signedIn } = globalThis as unknown as TabGlobals;
          const token = await client.getAccessToken();
          const me = token === null ? null : (await client.me()).email;
          return { signedIn, me };
        }),
      ),
    );
  }

  it('should rotate hundreds of times across five tabs with zero reuse detections, every tab staying signed in', async () => {
    const tabs = await openTabs(TABS);
    const email = `tabs-${Date.now()}@example.com`;
    const userId = await registerIn(tabs, email);

    // A tab that waited for the lock while a sibling rotated adopts that pair: about one
    // rotation per round, whatever the number of tabs.
    const outcomes = await refreshTogether(tabs, 250);

    expect(outcomes).toEqual(Array(TABS).fill({ refreshed: 250, failures: [] }));
    expect(await stateOfTabs(tabs)).toEqual(Array(TABS).fill({ signedIn: true, me: email }));
    const counts = auditCounts(userId);
    expect(counts.reuse_detected ?? 0).toBe(0);
    expect(counts.refresh_failed ?? 0).toBe(0);
    expect(counts.token_refreshed).toBeGreaterThanOrEqual(200);
  });

  it('should refresh shortly before expiry in five tabs at once, as their tokens keep expiring, with zero reuse detections', async () => {
    // The pages' clock (Date and timers) is Playwright's: 16 minutes pass in a moment, so each
    // tab's 15-minute access token comes due together, again and again.
    await context.clock.install();
    const tabs = await openTabs(TABS);
    const email = `expiry-${Date.now()}@example.com`;
    const userId = await registerIn(tabs, email);
    const tokensOf = () =>
      Promise.all(
        tabs.map((tab) =>
          tab.evaluate(() => (globalThis as unknown as TabGlobals).client.getAccessToken()),
        ),
      );

    const rounds: number[] = [];
    for (let round = 0; round < 20; round += 1) {
      const before = await tokensOf();
      await context.clock.fastForward('16:00');
      // Every tab's timer fired; once they settle, each holds the round's one new pair.
      for (const [index, tab] of tabs.entries()) {
        await tab.waitForFunction(
          async (old) =>
            (await (globalThis as unknown as TabGlobals).client.getAccessToken()) !== old,
          before[index],
        );
      }
      rounds.push(new Set(await tokensOf()).size);
    }

    expect(rounds).toEqual(Array(20).fill(1));
    expect(await stateOfTabs(tabs)).toEqual(Array(TABS).fill({ signedIn: true, me: email }));
    const counts = auditCounts(userId);
    expect(counts.reuse_detected ?? 0).toBe(0);
    expect(counts.token_refreshed).toBe(20);
  });

  it('should do the same where Web Locks are missing, taking turns through an IndexedDB lease', async () => {
    const tabs = await openTabs(TABS, 'indexeddb-lease');
    const email = `lease-${Date.now()}@example.com`;
    const userId = await registerIn(tabs, email);

    const outcomes = await refreshTogether(tabs, 25);

    expect(outcomes).toEqual(Array(TABS).fill({ refreshed: 25, failures: [] }));
    expect(await stateOfTabs(tabs)).toEqual(Array(TABS).fill({ signedIn: true, me: email }));
    const counts = auditCounts(userId);
    expect(counts.reuse_detected ?? 0).toBe(0);
    expect(counts.token_refreshed).toBeGreaterThanOrEqual(80);
  });

  it('should trip reuse detection and sign the tabs out when the locks are turned off', async () => {
    const tabs = await openTabs(TABS, 'none');
    const userId = await registerIn(tabs, `naive-${Date.now()}@example.com`);

    const outcomes = await refreshTogether(tabs, 20);

    expect(auditCounts(userId).reuse_detected).toBeGreaterThan(0);
    expect(outcomes.flatMap(({ failures }) => failures)).toContain('Refresh token revocado.');
    expect(await stateOfTabs(tabs)).toEqual(Array(TABS).fill({ signedIn: false, me: null }));
  });

  it('should end the session in every tab when one tab logs out, and revoke it', async () => {
    const tabs = await openTabs(TABS);
    const email = `logout-${Date.now()}@example.com`;
    const userId = await registerIn(tabs, email);
    const stored = await tabs[4].evaluate(() =>
      (
        globalThis as unknown as { localStorage: { getItem(key: string): string | null } }
      ).localStorage.getItem('keygate.session'),
    );

    await tabs[2].evaluate(() => (globalThis as unknown as TabGlobals).client.logout());
    for (const tab of tabs) {
      await tab.waitForFunction(() => !(globalThis as unknown as TabGlobals).signedIn);
    }

    expect(await stateOfTabs(tabs)).toEqual(Array(TABS).fill({ signedIn: false, me: null }));
    const refreshes = await Promise.all(
      tabs.map((tab) =>
        tab.evaluate(() =>
          (globalThis as unknown as TabGlobals).client.refresh().then(
            () => 'refreshed',
            (error: Error) => error.message,
          ),
        ),
      ),
    );
    expect(refreshes).toEqual(Array(TABS).fill('Refresh token inválido.'));
    const replay = await fetch(`${keygate.baseUrl}/api/auth/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        refreshToken: (JSON.parse(stored ?? '{}') as { refreshToken?: string }).refreshToken,
      }),
    });
    expect({ status: replay.status, body: await replay.json() }).toEqual({
      status: 401,
      body: { status: 401, message: 'Refresh token revocado.', timestamp: expect.any(String) },
    });
    // Nobody presented the revoked token but this replay: one detection, after the session ended.
    expect(auditCounts(userId)).toMatchObject({ token_revoked: 1, reuse_detected: 1 });
  });

  /**
   * Lets the tab's next refresh request reach the service, then drops its answer: the service
   * rotated, the page sees a network error. Later requests pass untouched. Counts the requests.
   */
  async function loseNextRefreshAnswer(
    tab: Page,
    server: ServerProcess,
  ): Promise<{ seen: number; dropped?: { refreshToken?: string } }> {
    const requests: { seen: number; dropped?: { refreshToken?: string } } = { seen: 0 };
    await tab.route(`${server.baseUrl}/api/auth/refresh`, async (route: Route) => {
      if (route.request().method() !== 'POST') {
        await route.continue();
        return;
      }
      requests.seen += 1;
      if (requests.seen === 1) {
        const answer = await route.fetch();
        requests.dropped = (await answer.json()) as { refreshToken?: string };
        await route.abort('failed');
      } else {
        await route.continue();
      }
    });
    return requests;
  }

  it('should keep the session when a refresh answer is lost, with the retry window on: one retry, the same pair', async () => {
    const tabs = await openTabs(TABS, undefined, retrying);
    const email = `lost-${Date.now()}@example.com`;
    const userId = await registerIn(tabs, email);
    const requests = await loseNextRefreshAnswer(tabs[1], retrying);

    const outcome = await tabs[1].evaluate(() =>
      (globalThis as unknown as TabGlobals).client.refresh().then(
        (pair) => pair.refreshToken,
        (error: Error) => error.message,
      ),
    );
    const seen = requests.seen;
    const outcomes = await refreshTogether(tabs, 10);

    // Asked exactly once more, and given the very pair whose answer was lost.
    expect(seen).toBe(2);
    expect(outcome).toBe(requests.dropped?.refreshToken);
    expect(outcome).toEqual(expect.stringMatching(/^[\w-]{43}$/));
    expect(outcomes).toEqual(Array(TABS).fill({ refreshed: 10, failures: [] }));
    expect(await stateOfTabs(tabs)).toEqual(Array(TABS).fill({ signedIn: true, me: email }));
    const counts = auditCounts(userId, retrying);
    expect(counts.refresh_retried).toBe(1);
    expect(counts.reuse_detected ?? 0).toBe(0);
  });

  it('should lose the session to reuse detection when an answer is lost and the service has no retry window', async () => {
    const tabs = await openTabs(2);
    const userId = await registerIn(tabs, `lost-off-${Date.now()}@example.com`);
    await loseNextRefreshAnswer(tabs[0], keygate);

    const outcome = await tabs[0].evaluate(() =>
      (globalThis as unknown as TabGlobals).client.refresh().then(
        () => 'refreshed',
        (error: Error) => error.message,
      ),
    );
    for (const tab of tabs) {
      await tab.waitForFunction(() => !(globalThis as unknown as TabGlobals).signedIn);
    }

    expect(outcome).toBe('Refresh token revocado.');
    expect(auditCounts(userId)).toMatchObject({ reuse_detected: 1 });
  });
});
