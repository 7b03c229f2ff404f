import type { Browser, Locator, Page } from 'playwright-core';
import { startDevelopmentServer, type DevelopmentServer } from '../utils/development-server.js';
import { ME, REGISTER } from '../utils/routes.js';
import { stopAllServers } from '../utils/spawn-server.js';
import { launchChromium } from './chromium.js';

// The development Swagger UI at `/`, in a real browser: Debian's Chromium driven by
// playwright-core (never a downloaded browser), against the built service (dist/main.js).
// `npm run test:browser`; not part of `npm test`.

const UI_TIMEOUT_MS = 15_000;
const SPEC_OPERATIONS = [
  'POST /api/auth/register',
  'POST /api/auth/login',
  'POST /api/auth/refresh',
  'POST /api/auth/revoke',
  'GET /api/auth/me',
];

describe('Swagger UI in development', () => {
  let development: DevelopmentServer;
  let browser: Browser;
  let page: Page;
  /** Every request the page made, and what the browser logged as an error. */
  const requested: string[] = [];
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    development = await startDevelopmentServer();
    browser = await launchChromium();
    page = await browser.newPage();
    page.setDefaultTimeout(UI_TIMEOUT_MS);
    page.on('request', (request) => requested.push(request.url()));
    page.on('console', (message) => {
      if (message.type() === 'error') {
        consoleErrors.push(message.text());
      }
    });
    // The page must work from the service alone: anything it asks of another origin is refused.
    const origin = development.server.baseUrl;
    await page.route('**/*', (route) =>
      route.request().url().startsWith(`${origin}/`) ? route.continue() : route.abort(),
    );
    await page.goto(`${origin}/`);
  });

  afterAll(async () => {
    await browser?.close();
    await development?.stop();
    await stopAllServers();
  });

  /** The operation block of one route, found by what the page shows. */
  function operation(method: string, path: string): Locator {
    return page
      .locator('.opblock')
      .filter({ has: page.locator(`.opblock-summary-path[data-path="${path}"]`) })
      .filter({ has: page.locator('.opblock-summary-method', { hasText: method }) });
  }

  it('should list the operations of the specification', async () => {
    await operation('GET', ME).waitFor();

    const shown: string[] = [];
    for (const summary of await page.locator('.opblock-summary').all()) {
      const method = await summary.locator('.opblock-summary-method').innerText();
      const path = await summary.locator('.opblock-summary-path').getAttribute('data-path');
      shown.push(`${method} ${path ?? ''}`);
    }

    expect(shown).toEqual(expect.arrayContaining(SPEC_OPERATIONS));
  });

  it('should register a user with "Try it out" and show the 201 answer', async () => {
    const email = `browser-${Date.now()}@example.com`;
    const register = operation('POST', REGISTER);

    await register.locator('.opblock-summary').click();
    await register.getByRole('button', { name: 'Try it out' }).click();
    await register
      .locator('textarea.body-param__text')
      .fill(JSON.stringify({ username: 'browser', email, password: 'S3cure!pass' }));
    await register.getByRole('button', { name: 'Execute' }).click();

    const answer = register.locator('.live-responses-table .response');
    await answer
      .locator('.response-col_status')
      .filter({ hasText: /^\s*201\s*$/ })
      .waitFor();
    const body = await answer.locator('.response-col_description').innerText();
    expect(body).toContain(`"email": "${email}"`);
    expect(body).toContain('"accessToken"');
  });

  it('should work under its own Content-Security-Policy, asking nothing of another origin', async () => {
    await operation('GET', '/api/auth/me').waitFor();
    const response = await fetch(`${development.server.baseUrl}/`);

    expect(response.headers.get('content-security-policy')).toBe(
      "default-src 'self';script-src 'self';style-src 'self' 'unsafe-inline';" +
        "img-src 'self' data:;connect-src 'self';object-src 'none';base-uri 'none';" +
        "form-action 'self';frame-ancestors 'none'",
    );
    expect(consoleErrors).toEqual([]);
    const origin = development.server.baseUrl;
    expect(
      requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:')),
    ).toEqual([]);
  });
});
