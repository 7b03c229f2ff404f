import fc from 'fast-check';
import { registerUser } from './factories/user.factory.js';
import { type TestResponse, useSharedTestApp } from './utils/create-test-app.js';
import { LOGIN, ME, REFRESH, REGISTER, REVOKE, REVOKE_ALL_SESSIONS } from './utils/routes.js';

const ENDPOINTS = [REGISTER, LOGIN, REFRESH, REVOKE, REVOKE_ALL_SESSIONS];

const FIELD_NAMES = [
  'username',
  'email',
  'password',
  'refreshToken',
  'reason',
  'keepCurrent',
  '__proto__',
  'constructor',
];

/** Leaks that must never reach a client: stack frames, SQL, driver names, file paths. */
const LEAKS = [
  /\n\s+at /,
  /node_modules/,
  /SQLITE/i,
  /QueryFailedError/,
  /SELECT |INSERT |UPDATE /,
  /\/(work|tmp|home|usr)\//,
  /\.ts:\d+/,
];

type Shape = 'auth' | 'user' | 'message' | 'revokedSessions' | 'error' | 'problem' | 'unauthorized';

function shapeOf(response: TestResponse): Shape | undefined {
  const body = response.json<Record<string, unknown>>();
  const keys = Object.keys(body).sort().join(',');
  switch (keys) {
    case 'accessToken,accessTokenExpiry,refreshToken,user':
      return 'auth';
    case 'createdAt,email,id,username':
      return 'user';
    case 'message':
      return 'message';
    case 'message,revokedSessions':
      return 'revokedSessions';
    case 'message,status,timestamp':
      return body.status === response.status ? 'error' : undefined;
    case 'errors,status,title,type':
      return response.status === 400 ? 'problem' : undefined;
    case 'message,status':
      return response.status === 401 && body.message === 'Unauthorized'
        ? 'unauthorized'
        : undefined;
    default:
      return undefined;
  }
}

const jsonValue = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme', maxLength: 300 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.string(), { maxKeys: 3 }),
);

const objectBody = fc.dictionary(fc.constantFrom(...FIELD_NAMES, 'extra'), jsonValue, {
  maxKeys: 6,
});

const rawBody = fc.oneof(
  objectBody.map((body) => JSON.stringify(body)),
  jsonValue.map((value) => JSON.stringify(value)),
  fc.string({ maxLength: 200 }),
  fc.constant('{"__proto__":{"isAdmin":true}}'),
  // NUL and other control characters, which PostgreSQL refuses in text columns.
  fc
    .tuple(fc.constantFrom(...FIELD_NAMES), fc.string({ unit: 'binary', maxLength: 40 }))
    .map(([field, value]) => JSON.stringify({ [field]: `a\u0000${value}@example.com` })),
  fc.constantFrom(
    JSON.stringify({ email: 'a\u0000@example.com', password: 'x' }),
    JSON.stringify({ refreshToken: 'x', reason: 'bye\u0000now' }),
    JSON.stringify({ username: 'a\u0000', email: 'a@example.com', password: 'S3cure!pass' }),
  ),
  fc.constant('{"constructor":{"prototype":{"isAdmin":true}}}'),
  fc.constant(''),
);

describe('hostile input', () => {
  const t = useSharedTestApp();
  let accessToken: string;

  beforeAll(async () => {
    ({ accessToken } = await registerUser(t));
  });

  it('should answer generated bodies on every endpoint with a documented shape, never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ENDPOINTS),
        rawBody,
        fc.boolean(),
        async (path, body, withToken) => {
          const response = await t.request(path, {
            method: 'POST',
            body,
            headers: {
              'content-type': 'application/json',
              ...(withToken ? { authorization: `Bearer ${accessToken}` } : {}),
            },
          });
          expect(response.status).not.toBe(500);
          expect(response.status).toBeLessThan(500);
          expect(shapeOf(response)).toBeDefined();
          for (const leak of LEAKS) {
            expect(response.text).not.toMatch(leak);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('should answer generated Authorization headers on /me with the bare 401 or the profile', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 200 }).filter((value) => /^[\x20-\x7e]*$/.test(value)),
          fc.string({ maxLength: 100 }).map((value) => `Bearer ${value}`),
          fc.constant(`Bearer ${'a'.repeat(20)}.${'b'.repeat(20)}.${'c'.repeat(20)}`),
        ),
        async (header) => {
          const response = await t.request(ME, { headers: { authorization: header } });
          expect([200, 401]).toContain(response.status);
          expect(shapeOf(response)).toBeDefined();
        },
      ),
      { numRuns: 200 },
    );
  });

  it('should not touch Object.prototype when a body carries __proto__ or constructor keys', async () => {
    for (const body of [
      '{"__proto__":{"polluted":1}}',
      '{"constructor":{"prototype":{"polluted":1}}}',
    ]) {
      const response = await t.request(LOGIN, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status).toBe(400);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    }
  });
});
