import { randomUUID } from 'node:crypto';
import { AdminKeysService } from '../src/admin/keys/admin-keys.service.js';
import { RandomSource } from '../src/common/random/random-source.js';
import { internalOrigin } from '../src/common/request-origin/request-origin.js';
import { ManagementServer } from '../src/metrics/management-server.js';
import { createTestApp, type TestApp } from './utils/create-test-app.js';
import { httpRequest, type TestResponse } from './utils/http.js';
import { ADMIN_USERS, ADMIN_WEBHOOKS } from './utils/routes.js';

// Issue 37 §3, the admin API at the HTTP edge. Where the admin API is not shown (no unrevoked key yet, or the listener
// AdminApi__Listener does not name), a request under /api/admin/ gets byte for byte what an
// unknown path of the same listener gets, whatever its method, content type or body: the status,
// every header but Date, and the body.

const ORIGIN = 'https://app.example.com';

/** Every request carries the same request id, so both answers echo the same one. */
const REQUEST_ID = 'c0ffee00-0000-4000-8000-000000000037';

interface Probe {
  readonly name: string;
  readonly method: string;
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** The requests that used to tell an admin path from an unknown one. */
const PROBES: readonly Probe[] = [
  {
    name: 'a text/plain body (was 415)',
    method: 'POST',
    path: ADMIN_WEBHOOKS,
    headers: { 'content-type': 'text/plain' },
    body: 'https://example.com/hook',
  },
  { name: 'a method the path has not (was 405 with Allow)', method: 'PUT', path: ADMIN_WEBHOOKS },
  {
    // An unknown path reads a JSON body too: both answer 400 problem details.
    name: 'a malformed JSON body',
    method: 'POST',
    path: ADMIN_WEBHOOKS,
    headers: { 'content-type': 'application/json' },
    body: '{',
  },
  { name: 'a route it has', method: 'GET', path: `${ADMIN_USERS}/${randomUUID()}` },
  {
    name: 'a percent-encoded path (was 415)',
    method: 'POST',
    path: '/api/%61dmin/webhooks',
    headers: { 'content-type': 'text/plain' },
    body: 'x',
  },
  {
    name: 'a CORS preflight (listed the methods)',
    method: 'OPTIONS',
    path: ADMIN_WEBHOOKS,
    headers: { origin: ORIGIN, 'access-control-request-method': 'POST' },
  },
  { name: 'a DELETE without body (was 405)', method: 'DELETE', path: ADMIN_USERS },
];

/** The answer as a client sees it, minus the Date header (the only one that may differ). */
async function answerTo(baseUrl: string, probe: Probe, path = probe.path) {
  const response: TestResponse = await httpRequest(baseUrl, path, {
    method: probe.method,
    headers: { 'x-request-id': REQUEST_ID, ...probe.headers },
    body: probe.body,
  });
  const headers = Object.fromEntries(
    [...response.headers.entries()].filter(([name]) => name !== 'date'),
  );
  return { status: response.status, headers, body: response.text };
}

/** The same request sent to a path no route serves, beside the admin one. */
function unknownPathOf(probe: Probe): string {
  return probe.path.replace(/^\/api\/(admin|%61dmin)\//, '/api/nothing-here/');
}

async function createKey(app: TestApp): Promise<string> {
  const { secret } = await app.app
    .get(AdminKeysService)
    .create(
      `key-${randomUUID().slice(0, 8)}`,
      ['users:read', 'webhooks:write'],
      internalOrigin('cli', app.app.get(RandomSource)),
    );
  return secret;
}

function managementUrl(app: TestApp): string {
  return `http://127.0.0.1:${app.app.get(ManagementServer).address?.port}`;
}

describe('the admin API where it is not shown', () => {
  describe('on the public port, before any admin key exists', () => {
    let app: TestApp;
    beforeAll(async () => {
      app = await createTestApp({ environment: { Cors__AllowedOrigins: ORIGIN } });
    });
    afterAll(() => app.close());

    it.each(PROBES)('should answer $name as an unknown path', async (probe) => {
      const unknown = await answerTo(app.baseUrl, probe, unknownPathOf(probe));
      const admin = await answerTo(app.baseUrl, probe);

      expect(admin).toEqual(unknown);
    });

    it('should show itself again, as documented, once a key exists', async () => {
      const key = await createKey(app);
      const wrongMethod = await answerTo(app.baseUrl, PROBES[1]);
      const textBody = await answerTo(app.baseUrl, {
        ...PROBES[0],
        headers: { ...PROBES[0].headers, authorization: `Bearer ${key}` },
      });

      expect({ status: wrongMethod.status, allow: wrongMethod.headers.allow }).toEqual({
        status: 405,
        allow: 'GET, HEAD, POST',
      });
      expect({ status: textBody.status, body: JSON.parse(textBody.body) as unknown }).toEqual({
        status: 415,
        body: {
          status: 415,
          message: 'Unsupported Media Type',
          timestamp: expect.any(String) as unknown,
        },
      });
    });
  });

  describe('with AdminApi__Listener=management', () => {
    let app: TestApp;
    beforeAll(async () => {
      app = await createTestApp({
        environment: { AdminApi__Listener: 'management', Cors__AllowedOrigins: ORIGIN },
      });
    });
    afterAll(() => app.close());

    it.each(PROBES)(
      'should answer $name on the management listener as its unknown paths, before any key exists',
      async (probe) => {
        const unknown = await answerTo(managementUrl(app), probe, '/nothing-here');
        const admin = await answerTo(managementUrl(app), probe);

        expect(unknown).toEqual({
          status: 404,
          headers: expect.objectContaining({ 'content-type': 'text/plain; charset=utf-8' }) as {
            [name: string]: string;
          },
          body: 'Not Found\n',
        });
        expect(admin).toEqual(unknown);
      },
    );

    it.each(PROBES)(
      'should answer $name on the public port as an unknown path, even once a key exists',
      async (probe) => {
        await createKey(app);
        const unknown = await answerTo(app.baseUrl, probe, unknownPathOf(probe));
        const admin = await answerTo(app.baseUrl, probe);

        expect(admin).toEqual(unknown);
      },
    );

    it('should serve the admin API on the management listener once a key exists', async () => {
      const key = await createKey(app);
      const served = await httpRequest(managementUrl(app), ADMIN_USERS, {
        headers: { authorization: `Bearer ${key}` },
      });
      const wrongMethod = await answerTo(managementUrl(app), PROBES[1]);

      expect({ status: served.status, body: served.json() }).toEqual({
        status: 200,
        body: { users: [], nextCursor: null },
      });
      expect({ status: wrongMethod.status, allow: wrongMethod.headers.allow }).toEqual({
        status: 405,
        allow: 'GET, HEAD, POST',
      });
    });
  });
});

describe('the admin API once shown', () => {
  const BAD_URL_BODY = {
    status: 400,
    message:
      'La URL debe ser http o https absoluta, sin usuario, contraseña ni fragmento, de 2048 caracteres como máximo.',
    timestamp: expect.any(String) as unknown,
  };
  const UNAUTHORIZED = { status: 401, message: 'Unauthorized' };

  let app: TestApp;
  let key: string;
  beforeAll(async () => {
    app = await createTestApp({
      environment: { Webhooks__EncryptionKeys: Buffer.alloc(32, 7).toString('base64') },
    });
    key = await createKey(app);
  });
  afterAll(() => app.close());

  // SPEC §5, as on the account routes: exactly `Bearer`, one space, then the key.
  it.each([
    ['bearer', (secret: string) => `bearer ${secret}`],
    ['BEARER', (secret: string) => `BEARER ${secret}`],
    ['Bearer and two spaces', (secret: string) => `Bearer  ${secret}`],
    ['Bearer and a tab', (secret: string) => `Bearer\t${secret}`],
  ])('should refuse a valid key sent as %s with the bare 401', async (_name, header) => {
    const response = await httpRequest(app.baseUrl, ADMIN_USERS, {
      headers: { authorization: header(key) },
    });

    expect({ status: response.status, body: response.json() }).toEqual({
      status: 401,
      body: UNAUTHORIZED,
    });
  });

  it('should open the route to the key sent as `Bearer <key>`', async () => {
    const response = await httpRequest(app.baseUrl, ADMIN_USERS, {
      headers: { authorization: `Bearer ${key}` },
    });

    expect(response.status).toBe(200);
  });

  /** A URL of exactly `length` characters. */
  function urlOfLength(length: number): string {
    const start = 'https://hooks.example.com/';
    return start + 'a'.repeat(length - start.length);
  }

  it.each([
    ['of 2,049 characters', urlOfLength(2049)],
    ['of 60,000 characters', urlOfLength(60_000)],
    ['with a control character', 'https://hooks.example.com/\u0007x'],
    ['with an invisible character', 'https://hooks.example.com/\u200bx'],
    ['of another scheme', 'ftp://hooks.example.com/x'],
  ])('should refuse a webhook URL %s with the sentence the CLI prints', async (_name, url) => {
    const response = await httpRequest(app.baseUrl, ADMIN_WEBHOOKS, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url, events: 'all' }),
    });

    expect({ status: response.status, body: response.json() }).toEqual({
      status: 400,
      body: BAD_URL_BODY,
    });
  });

  it('should take a URL of exactly 2,048 characters', async () => {
    const response = await httpRequest(app.baseUrl, ADMIN_WEBHOOKS, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: urlOfLength(2048), events: 'all' }),
    });

    expect({ status: response.status, url: response.json().url }).toEqual({
      status: 201,
      url: urlOfLength(2048),
    });
  });
});
