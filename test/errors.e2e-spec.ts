import { QueryFailedError } from 'typeorm';
import { AuthService } from '../src/auth/auth.service.js';
import {
  ConflictError,
  InvalidArgumentError,
  NotFoundError,
  UnauthorizedError,
} from '../src/common/errors/domain-errors.js';
import { User } from '../src/users/entities/user.entity.js';
import { DEFAULT_PASSWORD, registerUser, type RegisteredUser } from './factories/user.factory.js';
import {
  TEST_SECRET_KEY,
  type TestApp,
  type TestAppOptions,
  type TestResponse,
  useSharedTestApp,
} from './utils/create-test-app.js';
import { FakeClock } from './utils/fake-clock.js';
import { errorBody, problemDetails, UNAUTHORIZED_BODY } from './utils/expected-bodies.js';
import {
  ACCESS_TOKEN_LIFETIME_S,
  accessTokenClaims,
  decodeJwt,
  signJwt,
  unsignedJwt,
  withPayload,
  type HmacAlgorithm,
} from './utils/jwt.js';
import { LOGIN, ME, REFRESH, REGISTER, REVOKE } from './utils/routes.js';

/** Matches any message text; SPEC §7 leaves these messages open. */
const ANY_TEXT = expect.any(String) as string;

const START = new Date('2026-03-01T08:00:00.000Z');
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;
const JSON_CONTENT_TYPE = /^application\/json\b/;
const JSON_OR_PROBLEM_CONTENT_TYPE = /^application\/(problem\+)?json\b/;
const PROBLEM_KEYS = ['errors', 'status', 'title', 'type'];
const ERROR_BODY_KEYS = ['message', 'status', 'timestamp'];
/** SPEC §7: details of a failure are only logged, never returned. */
const LEAKS = ['    at ', 'node_modules', 'QueryFailedError', 'SQLITE'];

/** Every response in this file goes through here. */
function expectNoLeak(response: TestResponse): TestResponse {
  for (const leak of LEAKS) {
    expect(response.text).not.toContain(leak);
  }
  return response;
}

type Api = Pick<TestApp, 'request' | 'post' | 'get'>;

/** The test app's HTTP helpers, with every answer checked for leaked internals. */
function leakChecked(t: TestApp): Api {
  return {
    request: async (path, init) => expectNoLeak(await t.request(path, init)),
    post: async (path, body, token) => expectNoLeak(await t.post(path, body, token)),
    get: async (path, token) => expectNoLeak(await t.get(path, token)),
  };
}

/** SPEC §2.4: exactly status, message and timestamp, served as JSON. */
function expectErrorBody(response: TestResponse, status: number, message: string): void {
  expect({ status: response.status, body: response.json() }).toEqual({
    status,
    body: errorBody(status, message),
  });
  expect(Object.keys(response.json()).sort()).toEqual(ERROR_BODY_KEYS);
  expect(response.headers.get('content-type')).toMatch(JSON_CONTENT_TYPE);
}

/** SPEC §7: problem details with exactly type, title, status and errors, served as JSON. */
function expectProblemDetails(response: TestResponse, fields?: readonly string[]): void {
  expect(response.status).toBe(400);
  expect(response.headers.get('content-type')).toMatch(JSON_OR_PROBLEM_CONTENT_TYPE);
  const body = response.json<{ errors: Record<string, unknown> }>();
  expect(Object.keys(body).sort()).toEqual(PROBLEM_KEYS);
  if (fields !== undefined) {
    expect(body).toEqual(problemDetails(fields));
    return;
  }
  expect(body).toEqual({
    type: expect.any(String),
    title: 'One or more validation errors occurred.',
    status: 400,
    errors: expect.any(Object),
  });
  const lists = Object.values(body.errors);
  expect(lists.length).toBeGreaterThan(0);
  for (const list of lists) {
    expect(Array.isArray(list) && list.length > 0).toBe(true);
    for (const message of list as unknown[]) {
      expect(typeof message).toBe('string');
    }
  }
}

/** SPEC §7: a missing or invalid access token, exactly `{ status: 401, message: 'Unauthorized' }`. */
function expectUnauthorized(response: TestResponse): void {
  expect({ status: response.status, body: response.json() }).toEqual({
    status: 401,
    body: UNAUTHORIZED_BODY,
  });
  expect(response.json()).not.toHaveProperty('timestamp');
  expect(response.headers.get('content-type')).toMatch(JSON_CONTENT_TYPE);
}

interface SignOptions {
  readonly alg?: HmacAlgorithm;
  readonly secret?: string;
}

/** A token signed like the service's own unless told otherwise: HS256 with the test secret. */
function signToken(payload: Record<string, unknown>, options: SignOptions = {}): string {
  const { alg = 'HS256', secret = TEST_SECRET_KEY } = options;
  return signJwt({ alg, typ: 'JWT' }, payload, secret, alg);
}

function bearer(token: string): string {
  return `Bearer ${token}`;
}

interface AuthorizationCase {
  readonly name: string;
  readonly authorization: (user: RegisteredUser, now: Date) => string | undefined;
}

const INVALID_AUTHORIZATION: readonly AuthorizationCase[] = [
  { name: 'no Authorization header', authorization: () => undefined },
  { name: "'Bearer' alone", authorization: () => 'Bearer' },
  { name: "'Bearer ' followed by nothing", authorization: () => 'Bearer ' },
  { name: 'a lower-case bearer scheme', authorization: (u) => `bearer ${u.accessToken}` },
  { name: 'two spaces after Bearer', authorization: (u) => `Bearer  ${u.accessToken}` },
  { name: 'the Basic scheme', authorization: () => 'Basic xyz' },
  { name: 'a token that is not a JWT', authorization: () => 'Bearer not-a-token' },
  { name: 'a malformed JWT', authorization: () => 'Bearer aaaa.bbbb.cccc' },
  {
    name: 'a token signed with another secret',
    authorization: (u, now) =>
      bearer(signToken(accessTokenClaims(u, now), { secret: `${TEST_SECRET_KEY}!` })),
  },
  {
    name: 'a payload changed after signing',
    authorization: (u) =>
      bearer(
        withPayload(u.accessToken, {
          ...decodeJwt(u.accessToken).payload,
          email: 'someone@example.com',
        }),
      ),
  },
  {
    name: 'HS384 with the right secret',
    authorization: (u, now) => bearer(signToken(accessTokenClaims(u, now), { alg: 'HS384' })),
  },
  {
    name: 'HS512 with the right secret',
    authorization: (u, now) => bearer(signToken(accessTokenClaims(u, now), { alg: 'HS512' })),
  },
  {
    name: 'an unsigned alg:none token',
    authorization: (u, now) => bearer(unsignedJwt(accessTokenClaims(u, now))),
  },
  {
    name: 'an alg:none token carrying a signature',
    authorization: (u, now) =>
      bearer(unsignedJwt(accessTokenClaims(u, now), u.accessToken.split('.')[2])),
  },
  {
    name: 'an expired token',
    authorization: (u, now) => {
      const issuedAt = Math.floor(now.getTime() / 1000) - ACCESS_TOKEN_LIFETIME_S - 1;
      return bearer(
        signToken(
          accessTokenClaims(u, now, { iat: issuedAt, exp: issuedAt + ACCESS_TOKEN_LIFETIME_S }),
        ),
      );
    },
  },
  {
    name: 'a token whose exp is now',
    authorization: (u, now) =>
      bearer(signToken(accessTokenClaims(u, now, { exp: Math.floor(now.getTime() / 1000) }))),
  },
  {
    name: 'a token without exp',
    authorization: (u, now) => bearer(signToken(accessTokenClaims(u, now, {}, ['exp']))),
  },
  {
    name: 'a wrong issuer',
    authorization: (u, now) => bearer(signToken(accessTokenClaims(u, now, { iss: 'evil-issuer' }))),
  },
  {
    name: 'no issuer',
    authorization: (u, now) => bearer(signToken(accessTokenClaims(u, now, {}, ['iss']))),
  },
  {
    name: 'a wrong audience',
    authorization: (u, now) =>
      bearer(signToken(accessTokenClaims(u, now, { aud: 'other-clients' }))),
  },
  {
    name: 'no audience',
    authorization: (u, now) => bearer(signToken(accessTokenClaims(u, now, {}, ['aud']))),
  },
  {
    name: 'a sub that is not a UUID',
    authorization: (u, now) => bearer(signToken(accessTokenClaims(u, now, { sub: 'admin' }))),
  },
  {
    name: 'no sub',
    authorization: (u, now) => bearer(signToken(accessTokenClaims(u, now, {}, ['sub']))),
  },
];

interface ProtectedEndpoint {
  readonly name: string;
  readonly send: (api: Api, user: RegisteredUser, authorization?: string) => Promise<TestResponse>;
}

const PROTECTED_ENDPOINTS: readonly ProtectedEndpoint[] = [
  {
    name: `GET ${ME}`,
    send: (api, _user, authorization) =>
      api.request(ME, { headers: authorization === undefined ? {} : { authorization } }),
  },
  {
    name: `POST ${REVOKE}`,
    send: (api, user, authorization) =>
      api.request(REVOKE, {
        method: 'POST',
        body: JSON.stringify({ refreshToken: user.refreshToken, reason: 'logout' }),
        headers: {
          'content-type': 'application/json',
          ...(authorization === undefined ? {} : { authorization }),
        },
      }),
  },
];

/**
 * Boots one app for the enclosing describe block. Each block gets its own app, created when the
 * block starts: passport keeps strategies in a process-wide registry, so the JwtStrategy (and
 * Clock) of the app created last serves every app in this worker.
 */
function useApp(options: TestAppOptions = {}): { readonly t: TestApp; readonly api: Api } {
  const t = useSharedTestApp(() => ({ clock: new FakeClock(START), ...options }));
  beforeEach(() => {
    t.clock.set(START);
  });
  return { t, api: leakChecked(t) };
}

describe('errors (SPEC §7)', () => {
  describe('failure kinds raised by the service', () => {
    const ctx = useApp();

    it('should answer an unauthorized access with 401 and its specific message', async () => {
      const user = await registerUser(ctx.t);

      const response = await ctx.api.post(LOGIN, { email: user.email, password: 'Wr0ng!pass' });

      expectErrorBody(response, 401, 'Credenciales inválidas.');
    });

    it('should answer an invalid operation with 409 and its specific message', async () => {
      const user = await registerUser(ctx.t);

      const response = await ctx.api.post(REGISTER, {
        username: 'someone-else',
        email: user.email,
        password: DEFAULT_PASSWORD,
      });

      expectErrorBody(response, 409, 'Ya existe una cuenta con ese email.');
    });

    it('should answer a key not found with 404 and its specific message', async () => {
      const user = await registerUser(ctx.t);
      await ctx.t.dataSource.getRepository(User).delete({ id: user.id });

      const response = await ctx.api.get(ME, user.accessToken);

      expectErrorBody(response, 404, 'Usuario no encontrado.');
    });

    it('should stamp the error body with the current time of the clock', async () => {
      ctx.t.clock.set(new Date('2026-07-04T12:34:56.789Z'));

      const response = await ctx.api.post(LOGIN, { email: 'nobody@example.com', password: 'x' });

      expectErrorBody(response, 401, 'Credenciales inválidas.');
      expect(response.json()).toHaveProperty('timestamp', '2026-07-04T12:34:56.789Z');
    });
  });

  describe('failures injected into a service', () => {
    let failure: unknown;
    // Rejects asynchronously, as a real repository call would.
    const reject = async (): Promise<never> => {
      await Promise.resolve();
      throw failure;
    };
    const ctx = useApp({
      override: (builder) =>
        builder.overrideProvider(AuthService).useValue({ login: reject, register: reject }),
    });
    const loginBody = { email: 'a@example.com', password: 'S3cure!pass' };

    beforeEach(() => {
      ctx.t.logger.entries.length = 0;
    });

    it.each([
      { error: new UnauthorizedError('u'), status: 401 },
      { error: new ConflictError('c'), status: 409 },
      { error: new NotFoundError('n'), status: 404 },
      { error: new InvalidArgumentError('x'), status: 400 },
    ])('should answer $error.name with $status and its own message', async ({ error, status }) => {
      failure = error;

      const response = await ctx.api.post(LOGIN, loginBody);

      expectErrorBody(response, status, error.message);
      expect(response.json()).toHaveProperty('timestamp', START.toISOString());
      expect(ctx.t.logger.at('error')).toEqual([]);
    });

    it.each([
      {
        name: 'an Error carrying SQL and a path',
        error: new Error('SELECT secret FROM /var/lib/x.db failed'),
      },
      {
        name: 'a TypeORM QueryFailedError',
        error: new QueryFailedError(
          'SELECT passwordHash FROM users',
          [],
          new Error('SQLITE_ERROR: no such table: /var/lib/users'),
        ),
      },
      {
        name: 'a TypeError',
        error: new TypeError("Cannot read properties of undefined (reading 'passwordHash')"),
      },
    ])('should answer $name with a bare 500 and log it with its stack', async ({ error }) => {
      failure = error;

      const response = await ctx.api.post(LOGIN, loginBody);

      expect({ status: response.status, body: response.json() }).toEqual({
        status: 500,
        body: { status: 500, message: 'Ocurrió un error interno.', timestamp: START.toISOString() },
      });
      expect(Object.keys(response.json()).sort()).toEqual(ERROR_BODY_KEYS);
      expect(response.headers.get('content-type')).toMatch(JSON_CONTENT_TYPE);
      for (const detail of ['SELECT', '/var', 'Error', 'at ', 'passwordHash']) {
        expect(response.text).not.toContain(detail);
      }
      const logged = ctx.t.logger.at('error').map((entry) => entry.text);
      expect(logged).toEqual([expect.stringContaining(error.message)]);
      expect(logged[0]).toMatch(/\n\s+at /);
    });

    it('should answer a thrown non-Error value with a bare 500 and log it', async () => {
      failure = 'boom: SELECT 1 FROM /var/lib/x.db';

      const response = await ctx.api.post(REGISTER, {
        username: 'u',
        email: 'u@example.com',
        password: DEFAULT_PASSWORD,
      });

      expectErrorBody(response, 500, 'Ocurrió un error interno.');
      expect(response.text).not.toContain('boom');
      expect(ctx.t.logger.at('error').map((entry) => entry.text)).toEqual([
        expect.stringContaining('boom: SELECT 1 FROM /var/lib/x.db'),
      ]);
    });
  });

  describe('request body validation', () => {
    const ctx = useApp();

    it.each([
      { path: LOGIN, body: { email: 'a@example.com' }, fields: ['password'] },
      { path: LOGIN, body: {}, fields: ['email', 'password'] },
      {
        path: REGISTER,
        body: { email: 'a@example.com', password: DEFAULT_PASSWORD },
        fields: ['username'],
      },
      { path: REGISTER, body: {}, fields: ['username', 'email', 'password'] },
      { path: REFRESH, body: {}, fields: ['refreshToken'] },
      { path: REFRESH, body: { refresh_token: 'x' }, fields: ['refreshToken'] },
    ])(
      'should answer problem details naming $fields for $path $body',
      async ({ path, body, fields }) => {
        const response = await ctx.api.post(path, body);

        expectProblemDetails(response, fields);
      },
    );

    it('should validate the body of a protected endpoint once the token is accepted', async () => {
      const user = await registerUser(ctx.t);

      const response = await ctx.api.post(REVOKE, { reason: 'logout' }, user.accessToken);

      expectProblemDetails(response, ['refreshToken']);
    });

    it.each([
      { name: 'malformed JSON', body: '{"email":' },
      { name: 'an empty body', body: '' },
      { name: 'a JSON array', body: '[{"email":"a@example.com","password":"S3cure!pass"}]' },
      { name: 'a JSON string', body: '"a@example.com"' },
      { name: 'a JSON number', body: '42' },
      { name: 'JSON null', body: 'null' },
      { name: 'JSON true', body: 'true' },
      {
        name: 'a __proto__ key',
        body: '{"email":"a@example.com","password":"S3cure!pass","__proto__":{"isAdmin":true}}',
      },
      {
        name: 'a constructor.prototype key',
        body: '{"email":"a@example.com","password":"S3cure!pass","constructor":{"prototype":{}}}',
      },
    ])('should answer problem details for $name as a JSON body', async ({ body }) => {
      const response = await ctx.api.post(LOGIN, body);

      expectProblemDetails(response);
    });

    it.each([
      { name: 'malformed JSON', body: '{"email":' },
      { name: 'an empty body', body: '' },
      { name: 'a JSON array', body: '[]' },
      { name: 'JSON null', body: 'null' },
    ])('should say of $name, under "$", that the body must be a JSON object', async ({ body }) => {
      const response = await ctx.api.post(LOGIN, body);

      expect(response.status).toBe(400);
      expect(response.json()).toStrictEqual({
        type: 'https://tools.ietf.org/html/rfc9110#section-15.5.1',
        title: 'One or more validation errors occurred.',
        status: 400,
        errors: { $: ['The request body must be a JSON object.'] },
      });
    });
  });

  describe('missing or invalid access token', () => {
    const ctx = useApp();

    let user: RegisteredUser;

    beforeAll(async () => {
      user = await registerUser(ctx.t);
    });

    describe.each(PROTECTED_ENDPOINTS)('$name', ({ send }) => {
      it.each(INVALID_AUTHORIZATION)(
        'should answer exactly 401 Unauthorized for $name',
        async ({ authorization }) => {
          const response = await send(ctx.api, user, authorization(user, ctx.t.clock.now()));

          expectUnauthorized(response);
        },
      );
    });

    it('should leave the refresh token usable after every rejected revoke', async () => {
      const response = await ctx.api.post(REFRESH, { refreshToken: user.refreshToken });

      expect(response.status).toBe(200);
    });

    it('should accept the token issued by the service', async () => {
      const response = await ctx.api.get(ME, user.accessToken);

      expect(response.status).toBe(200);
      expect(response.json()).toHaveProperty('id', user.id);
    });

    it('should accept a hand-crafted HS256 token, so the rejected ones differ only as named', async () => {
      const token = signToken(accessTokenClaims(user, ctx.t.clock.now()));

      const response = await ctx.api.get(ME, token);

      expect(response.status).toBe(200);
      expect(response.json()).toEqual({
        id: user.id,
        username: user.username,
        email: user.email.toLowerCase(),
        createdAt: expect.stringMatching(ISO_UTC),
      });
    });

    it('should reject an access token once its 15 minutes have passed', async () => {
      const fresh = await registerUser(ctx.t);

      ctx.t.clock.advance((ACCESS_TOKEN_LIFETIME_S - 1) * 1000);
      expect((await ctx.api.get(ME, fresh.accessToken)).status).toBe(200);
      ctx.t.clock.advance(1000);
      const response = await ctx.api.get(ME, fresh.accessToken);

      expectUnauthorized(response);
    });
  });

  describe('unknown routes', () => {
    const ctx = useApp();

    it.each([
      { method: 'GET', path: '/api/nope' },
      { method: 'POST', path: '/nope' },
      { method: 'GET', path: '/api/auth' },
    ])('should answer $method $path with a 404 error body', async ({ method, path }) => {
      const response = await ctx.api.request(path, {
        method,
        ...(method === 'POST'
          ? { body: '{}', headers: { 'content-type': 'application/json' } }
          : {}),
      });

      expectErrorBody(response, 404, ANY_TEXT);
      expect(response.json<{ message: string }>().message).not.toContain('nope');
    });
  });

  describe('a known path with another method', () => {
    const ctx = useApp();

    // DELETE /api/auth/me deletes the account (issue 17); PUT has no route there.
    it('should answer PUT /api/auth/me with a 405 error body and the methods it has', async () => {
      const response = await ctx.api.request(ME, { method: 'PUT' });

      expectErrorBody(response, 405, 'Method Not Allowed');
      expect(response.headers.get('allow')).toBe('GET, HEAD, DELETE');
    });
  });

  describe('body size and media type', () => {
    const ctx = useApp();

    const BODY_LIMIT = 64 * 1024;

    /** A login body of exactly `size` bytes, padded with a property the pipe strips. */
    function loginBodyOfSize(size: number): string {
      const empty = JSON.stringify({ email: 'big@example.com', password: 'S3cure!pass', pad: '' });
      return JSON.stringify({
        email: 'big@example.com',
        password: 'S3cure!pass',
        pad: 'a'.repeat(size - empty.length),
      });
    }

    it('should answer a body over 64 KiB with a 413 error body', async () => {
      const body = loginBodyOfSize(BODY_LIMIT + 1);
      expect(Buffer.byteLength(body)).toBe(BODY_LIMIT + 1);

      const response = await ctx.api.post(LOGIN, body);

      expectErrorBody(response, 413, ANY_TEXT);
    });

    it('should read a body of exactly 64 KiB', async () => {
      const body = loginBodyOfSize(BODY_LIMIT);
      expect(Buffer.byteLength(body)).toBe(BODY_LIMIT);

      const response = await ctx.api.post(LOGIN, body);

      expectErrorBody(response, 401, 'Credenciales inválidas.');
    });

    it.each([
      { contentType: 'text/plain', body: '{"email":"a@example.com","password":"S3cure!pass"}' },
      {
        contentType: 'application/x-www-form-urlencoded',
        body: 'email=a%40example.com&password=x',
      },
      { contentType: 'multipart/form-data; boundary=xyz', body: '--xyz--' },
      { contentType: 'application/xml', body: '<login/>' },
    ])('should answer a $contentType body with a 415 error body', async ({ contentType, body }) => {
      const response = await ctx.api.request(LOGIN, {
        method: 'POST',
        body,
        headers: { 'content-type': contentType },
      });

      expectErrorBody(response, 415, ANY_TEXT);
    });
  });
});
