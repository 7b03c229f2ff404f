import { randomUUID } from 'node:crypto';
import { registerUser, type RegisteredUser } from './factories/user.factory.js';
import {
  createTestApp,
  type TestApp,
  type TestResponse,
  useSharedTestApp,
} from './utils/create-test-app.js';
import { startDevelopmentServer } from './utils/development-server.js';
import {
  authResponse,
  errorBody,
  problemDetails,
  publicUser,
  UNAUTHORIZED_BODY,
} from './utils/expected-bodies.js';
import { httpRequest } from './utils/http.js';
import { HEALTH_LIVE, LOGIN, ME, REFRESH, REGISTER, REVOKE, SESSIONS } from './utils/routes.js';

// The headers of every answer (SPEC bodies unchanged): no caching, the security headers, and
// CORS for the front ends named in Cors__AllowedOrigins only.

const FRONT_END = 'https://app.example.com';
const DEV_FRONT_END = 'http://localhost:5173';
const FOREIGN = 'https://evil.example';
/** A start of the real process in development mode, on a busy machine. */
const PROCESS_TEST_TIMEOUT_MS = 30_000;
const UNKNOWN_API_PATH = '/api/auth/nothing';
const STATUS_TEXTS: Readonly<Record<number, string>> = {
  404: 'Not Found',
  405: 'Method Not Allowed',
};

const API_CSP = "default-src 'none';base-uri 'none';form-action 'none';frame-ancestors 'none'";
const ALLOWED_HEADERS = 'Authorization, Content-Type, X-Request-Id, X-Refresh-Token';
const EXPOSED_HEADERS = 'X-Request-Id, WWW-Authenticate';
const ANY_TEXT = expect.any(String) as unknown as string;
const TERMINUS_NO_CACHE = 'no-cache, no-store, must-revalidate';

interface Probe {
  readonly name: string;
  readonly path: string;
  /** A function for a request that must differ each time (a registration). */
  readonly init: RequestInit | (() => RequestInit);
  readonly status: number;
  readonly body: unknown;
}

/**
 * One request per kind of answer the service gives: successes, each kind of error, errors the
 * framework raises before a handler runs, unknown paths in and outside `/api`, a health probe.
 */
function probes(user: RegisteredUser, spare: RegisteredUser): Probe[] {
  const post = (body: unknown, headers: Record<string, string> = {}) => ({
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
  });
  const bearer = { authorization: `Bearer ${user.accessToken}` };
  const credentials = { email: user.email, password: user.password };
  return [
    {
      name: 'register 201',
      path: REGISTER,
      init: () =>
        post({
          username: 'carol',
          email: `carol-${randomUUID()}@example.com`,
          password: 'S3cure!pass',
        }),
      status: 201,
      body: authResponse({ username: 'carol', email: ANY_TEXT }),
    },
    {
      name: 'register 409',
      path: REGISTER,
      init: post({ username: 'x', ...credentials }),
      status: 409,
      body: errorBody(409, 'Ya existe una cuenta con ese email.'),
    },
    {
      name: 'register 400',
      path: REGISTER,
      init: post({}),
      status: 400,
      body: problemDetails(['username', 'email', 'password']),
    },
    {
      name: 'login 200',
      path: LOGIN,
      init: post(credentials),
      status: 200,
      body: authResponse(user),
    },
    {
      name: 'login 401',
      path: LOGIN,
      init: post({ ...credentials, password: 'Wr0ng!pass' }),
      status: 401,
      body: errorBody(401, 'Credenciales inválidas.'),
    },
    {
      name: 'login 400 (malformed JSON)',
      path: LOGIN,
      init: { method: 'POST', body: '{"email":', headers: { 'content-type': 'application/json' } },
      status: 400,
      body: problemDetails(['$']),
    },
    {
      name: 'login 413',
      path: LOGIN,
      init: {
        method: 'POST',
        body: JSON.stringify({ email: 'a'.repeat(70_000), password: 'x' }),
        headers: { 'content-type': 'application/json' },
      },
      status: 413,
      body: errorBody(413, 'Payload Too Large'),
    },
    {
      name: 'login 415',
      path: LOGIN,
      init: { method: 'POST', body: 'email=a', headers: { 'content-type': 'text/plain' } },
      status: 415,
      body: errorBody(415, 'Unsupported Media Type'),
    },
    {
      name: 'refresh 401',
      path: REFRESH,
      init: post({ refreshToken: 'unknown' }),
      status: 401,
      body: errorBody(401, 'Refresh token inválido.'),
    },
    {
      name: 'me 200',
      path: ME,
      init: { headers: bearer },
      status: 200,
      body: publicUser(user),
    },
    {
      name: 'me 401',
      path: ME,
      init: {},
      status: 401,
      body: UNAUTHORIZED_BODY,
    },
    {
      name: 'sessions 200',
      path: SESSIONS,
      init: { headers: bearer },
      status: 200,
      body: { sessions: expect.any(Array) as unknown },
    },
    {
      name: 'revoke 200',
      path: REVOKE,
      init: post(
        { refreshToken: spare.refreshToken },
        { authorization: `Bearer ${spare.accessToken}` },
      ),
      status: 200,
      body: { message: 'Token revocado exitosamente.' },
    },
    {
      name: 'unknown /api path 404',
      path: UNKNOWN_API_PATH,
      init: {},
      status: 404,
      body: errorBody(404, 'Not Found'),
    },
    {
      name: 'unknown path 404',
      path: '/nothing',
      init: {},
      status: 404,
      body: errorBody(404, 'Not Found'),
    },
    {
      name: 'health probe 200',
      path: HEALTH_LIVE,
      init: {},
      status: 200,
      body: { status: 'ok', info: {}, error: {}, details: {} },
    },
  ];
}

async function send(t: TestApp, probe: Probe, origin?: string): Promise<TestResponse> {
  const init = typeof probe.init === 'function' ? probe.init() : probe.init;
  const headers = new Headers(init.headers);
  if (origin !== undefined) {
    headers.set('origin', origin);
  }
  return t.request(probe.path, { ...init, headers });
}

function corsHeadersOf(response: TestResponse): Record<string, string> {
  return Object.fromEntries(
    [...response.headers].filter(([name]) => name.startsWith('access-control-')),
  );
}

function preflight(
  t: TestApp,
  path: string,
  origin: string | undefined,
  method = 'POST',
): Promise<TestResponse> {
  return t.request(path, {
    method: 'OPTIONS',
    headers: {
      ...(origin === undefined ? {} : { origin }),
      'access-control-request-method': method,
      'access-control-request-headers': 'authorization,content-type',
    },
  });
}

describe('HTTP headers', () => {
  describe('by default', () => {
    const t = useSharedTestApp();
    let all: Probe[];

    beforeAll(async () => {
      all = probes(await registerUser(t), await registerUser(t));
    });

    it('should answer every probe with its specified status and body', async () => {
      for (const probe of all) {
        const response = await send(t, probe);

        expect({ probe: probe.name, status: response.status, body: response.json() }).toEqual({
          probe: probe.name,
          status: probe.status,
          body: probe.body,
        });
      }
    });

    it('should forbid caching of every answer, errors included (RFC 6749 §5.1)', async () => {
      for (const probe of all) {
        const response = await send(t, probe);

        expect({
          probe: probe.name,
          cacheControl: response.headers.get('cache-control'),
          pragma: response.headers.get('pragma'),
        }).toEqual({
          probe: probe.name,
          cacheControl: probe.path === HEALTH_LIVE ? TERMINUS_NO_CACHE : 'no-store',
          pragma: 'no-cache',
        });
      }
    });

    it('should send the security headers on every answer, errors included', async () => {
      for (const probe of all) {
        const response = await send(t, probe);

        expect({
          probe: probe.name,
          nosniff: response.headers.get('x-content-type-options'),
          referrer: response.headers.get('referrer-policy'),
          csp: response.headers.get('content-security-policy'),
          frames: response.headers.get('x-frame-options'),
          hsts: response.headers.get('strict-transport-security'),
        }).toEqual({
          probe: probe.name,
          nosniff: 'nosniff',
          referrer: 'no-referrer',
          csp: API_CSP,
          frames: 'DENY',
          hsts: null,
        });
      }
    });

    it('should send no CORS header, and answer a preflight as any OPTIONS request: 405', async () => {
      for (const probe of all) {
        const response = await send(t, probe, FRONT_END);

        expect({ probe: probe.name, cors: corsHeadersOf(response) }).toEqual({
          probe: probe.name,
          cors: {},
        });
        expect(response.headers.get('vary') ?? '').not.toMatch(/origin/i);
      }

      const response = await preflight(t, LOGIN, FRONT_END);

      expect({
        status: response.status,
        allow: response.headers.get('allow'),
        body: response.json(),
      }).toEqual({ status: 405, allow: 'POST', body: errorBody(405, 'Method Not Allowed') });
      expect(corsHeadersOf(response)).toEqual({});
    });
  });

  describe('Strict-Transport-Security', () => {
    it.each([
      [{ Hsts__Enabled: 'true' }, 'max-age=31536000'],
      [
        { Hsts__Enabled: 'true', Hsts__MaxAgeSeconds: '600', Hsts__IncludeSubDomains: 'true' },
        'max-age=600; includeSubDomains',
      ],
    ])('should be sent on every answer with %j', async (environment, expected) => {
      const t = await createTestApp({ environment });
      try {
        for (const path of [ME, UNKNOWN_API_PATH, HEALTH_LIVE]) {
          const response = await t.get(path);

          expect({ path, hsts: response.headers.get('strict-transport-security') }).toEqual({
            path,
            hsts: expected,
          });
        }
      } finally {
        await t.close();
      }
    });
  });

  describe('CORS for the configured front ends', () => {
    const t = useSharedTestApp({
      environment: { Cors__AllowedOrigins: `${FRONT_END}, ${DEV_FRONT_END}/` },
    });
    let all: Probe[];

    beforeAll(async () => {
      all = probes(await registerUser(t), await registerUser(t));
    });

    /**
     * The methods each registered path is served with: its own routes' and those of every route
     * with a parameter that the path also matches (`DELETE /api/admin/webhooks/:id` serves a
     * DELETE of `/api/admin/webhooks/dead`, whose own route is a GET).
     */
    function methodsByPath(): Map<string, string[]> {
      const routes = t.routes.filter(({ method }) => method !== 'OPTIONS');
      const matcherOf = (url: string): RegExp =>
        new RegExp(
          `^${url
            .split('/')
            .map((part) =>
              part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
            )
            .join('/')}$`,
        );
      const byPath = new Map<string, string[]>();
      for (const { url } of routes) {
        const methods = routes
          .filter((route) => route.url === url || matcherOf(route.url).test(url))
          .map((route) => route.method);
        byPath.set(url, [...new Set(methods)]);
      }
      return byPath;
    }

    it('should answer a preflight for every route and method with 204 and the methods of that route', async () => {
      const byPath = methodsByPath();
      expect(byPath.get(LOGIN)).toEqual(['POST']);
      // Deleting the account is a DELETE with a JSON body and a bearer token: never a simple request.
      expect(byPath.get(ME)?.sort()).toEqual(['DELETE', 'GET', 'HEAD']);

      // The admin API is hidden until an admin key exists: its paths answer a preflight as an
      // unknown path does (test/admin-api-edge.e2e-spec.ts compares the two).
      const shown = [...byPath].filter(([path]) => !path.startsWith('/api/admin/'));
      for (const [path, methods] of shown) {
        for (const method of methods) {
          for (const origin of [FRONT_END, DEV_FRONT_END]) {
            const response = await preflight(t, path, origin, method);

            const route = `${method} ${path}`;
            expect({ route, status: response.status, body: response.text }).toEqual({
              route,
              status: 204,
              body: '',
            });
            const cors = corsHeadersOf(response);
            const allowMethods = (cors['access-control-allow-methods'] ?? '').split(', ').sort();
            expect({ route, cors, allowMethods }).toEqual({
              route,
              allowMethods: [...methods].sort(),
              cors: {
                'access-control-allow-origin': origin,
                'access-control-allow-methods': expect.any(String) as unknown,
                'access-control-allow-headers': ALLOWED_HEADERS,
                'access-control-max-age': '7200',
              },
            });
            expect(response.headers.get('vary')).toMatch(/\borigin\b/i);
            expect(response.headers.get('cache-control')).toBe('no-store');
            expect(response.headers.get('x-request-id')).toEqual(expect.any(String));
          }
        }
      }
    });

    it('should allow the origin on every real answer, errors included, with the body unchanged', async () => {
      for (const probe of all) {
        const response = await send(t, probe, FRONT_END);

        expect({
          probe: probe.name,
          status: response.status,
          body: response.json(),
          cors: corsHeadersOf(response),
        }).toEqual({
          probe: probe.name,
          status: probe.status,
          body: probe.body,
          cors: {
            'access-control-allow-origin': FRONT_END,
            'access-control-expose-headers': EXPOSED_HEADERS,
          },
        });
        expect(response.headers.get('vary')).toMatch(/\borigin\b/i);
      }
    });

    it.each([
      ['a foreign origin', FOREIGN],
      ['the origin in another case', 'https://APP.example.com'],
      ['the origin with another scheme', 'http://app.example.com'],
      ['the origin with another port', 'https://app.example.com:8443'],
      ['a suffix of the origin', 'https://app.example.com.evil.example'],
      ['the opaque origin', 'null'],
    ])('should give %s no CORS header on any answer', async (_label, origin) => {
      for (const probe of all) {
        const response = await send(t, probe, origin);

        expect({
          probe: probe.name,
          status: response.status,
          cors: corsHeadersOf(response),
        }).toEqual({ probe: probe.name, status: probe.status, cors: {} });
      }
    });

    it.each([
      ['a foreign origin', LOGIN, FOREIGN, 405, 'POST'],
      ['no origin', LOGIN, undefined, 405, 'POST'],
      ['an allowed origin, for a path no route serves', UNKNOWN_API_PATH, FRONT_END, 404, null],
    ])(
      'should answer a preflight from %s as any OPTIONS request, without a CORS header',
      async (_label, path, origin, status, allow) => {
        const response = await preflight(t, path, origin);

        expect({
          status: response.status,
          allow: response.headers.get('allow'),
          body: response.json(),
        }).toEqual({ status, allow, body: errorBody(status, STATUS_TEXTS[status] ?? '') });
        expect(corsHeadersOf(response)).toEqual({});
      },
    );

    it('should answer an OPTIONS request that is no preflight as any OPTIONS request: 405', async () => {
      const response = await t.request(LOGIN, {
        method: 'OPTIONS',
        headers: { origin: FRONT_END },
      });

      expect({
        status: response.status,
        allow: response.headers.get('allow'),
        body: response.json(),
      }).toEqual({ status: 405, allow: 'POST', body: errorBody(405, 'Method Not Allowed') });
      expect(corsHeadersOf(response)).toEqual({
        'access-control-allow-origin': FRONT_END,
        'access-control-expose-headers': EXPOSED_HEADERS,
      });
    });
  });

  describe('CORS in development, with a loopback port wildcard', () => {
    it(
      'should allow localhost on any port, and nothing else',
      async () => {
        const development = await startDevelopmentServer({
          Cors__AllowedOrigins: 'http://localhost:*',
        });
        try {
          const answers: Record<string, unknown> = {};
          for (const origin of [
            'http://localhost:5173',
            'http://localhost:3001',
            'http://localhost',
            'https://localhost:5173',
            'http://localhost.evil.example:5173',
            'http://127.0.0.1:5173',
          ]) {
            const response = await httpRequest(development.server.baseUrl, LOGIN, {
              method: 'OPTIONS',
              headers: { origin, 'access-control-request-method': 'POST' },
            });
            answers[origin] = {
              status: response.status,
              allowOrigin: response.headers.get('access-control-allow-origin'),
            };
          }

          expect(answers).toEqual({
            'http://localhost:5173': { status: 204, allowOrigin: 'http://localhost:5173' },
            'http://localhost:3001': { status: 204, allowOrigin: 'http://localhost:3001' },
            'http://localhost': { status: 204, allowOrigin: 'http://localhost' },
            'https://localhost:5173': { status: 405, allowOrigin: null },
            'http://localhost.evil.example:5173': { status: 405, allowOrigin: null },
            'http://127.0.0.1:5173': { status: 405, allowOrigin: null },
          });
        } finally {
          await development.stop();
        }
      },
      PROCESS_TEST_TIMEOUT_MS,
    );
  });
});
