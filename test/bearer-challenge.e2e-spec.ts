import { registerUser, type RegisteredUser } from './factories/user.factory.js';
import {
  TEST_SECRET_KEY,
  type TestApp,
  type TestResponse,
  useSharedTestApp,
} from './utils/create-test-app.js';
import {
  bearerRefusal,
  challengeOf,
  errorBody,
  UNAUTHORIZED_BODY,
} from './utils/expected-bodies.js';
import { accessTokenClaims, signJwt, unsignedJwt } from './utils/jwt.js';
import {
  EMAIL_CHANGE,
  EMAIL_VERIFY_RESEND,
  LOGIN,
  ME,
  PASSWORD_CHANGE,
  REFRESH,
  REVOKE,
  REVOKE_ALL_SESSIONS,
  SESSIONS,
  TOTP_CONFIRM,
  TOTP_DISABLE,
  TOTP_ENROLL,
  TOTP_RECOVERY_CODES,
  PASSKEYS,
  PASSKEY_REGISTER_OPTIONS,
  PASSKEY_REGISTER_VERIFY,
} from './utils/routes.js';

// RFC 6750 §3: every 401 of the bearer-token guard says how to authenticate, and whether the
// token presented was the problem; the body stays SPEC §7's `{"status":401,"message":"Unauthorized"}`.

const MINUTE_MS = 60_000;
const OTHER_SECRET = 'another-secret-that-is-long-enough-0123456789abcdef';
const BEARER = 'Bearer';
const INVALID_TOKEN = 'Bearer error="invalid_token"';

/** The protected routes: every route of the service that a request without a token cannot use. */
const PROTECTED = [
  `GET ${ME}`,
  `POST ${REVOKE}`,
  `GET ${SESSIONS}`,
  `POST ${REVOKE_ALL_SESSIONS}`,
  `POST ${PASSWORD_CHANGE}`,
  `POST ${EMAIL_VERIFY_RESEND}`,
  `POST ${EMAIL_CHANGE}`,
  `DELETE ${ME}`,
  `POST ${TOTP_ENROLL}`,
  `POST ${TOTP_CONFIRM}`,
  `POST ${TOTP_RECOVERY_CODES}`,
  `POST ${TOTP_DISABLE}`,
  `POST ${PASSKEY_REGISTER_OPTIONS}`,
  `POST ${PASSKEY_REGISTER_VERIFY}`,
  `GET ${PASSKEYS}`,
  `PATCH ${PASSKEYS}/:id`,
  `DELETE ${PASSKEYS}/:id`,
];

const CASES: ReadonlyArray<
  readonly [string, (t: TestApp, user: RegisteredUser) => string | undefined, string]
> = [
  ['no Authorization header', () => undefined, BEARER],
  ['an empty Authorization header', () => '', BEARER],
  ['the scheme without a token', () => 'Bearer', BEARER],
  ['another scheme', (_t, user) => `Basic ${user.accessToken}`, BEARER],
  ['the token without a scheme', (_t, user) => user.accessToken, BEARER],
  ['a garbage token', () => 'Bearer garbage', INVALID_TOKEN],
  ['the scheme in lower case', (_t, user) => `bearer ${user.accessToken}`, INVALID_TOKEN],
  ['two spaces after the scheme', (_t, user) => `Bearer  ${user.accessToken}`, INVALID_TOKEN],
  [
    'a token signed with another secret',
    (t, user) =>
      `Bearer ${signJwt({ alg: 'HS256', typ: 'JWT' }, accessTokenClaims(user, t.clock.now()), OTHER_SECRET)}`,
    INVALID_TOKEN,
  ],
  [
    'an unsigned token',
    (t, user) => `Bearer ${unsignedJwt(accessTokenClaims(user, t.clock.now()))}`,
    INVALID_TOKEN,
  ],
  ['a refresh token', (_t, user) => `Bearer ${user.refreshToken}`, INVALID_TOKEN],
  [
    'an expired token',
    (t, user) => {
      const past = new Date(t.clock.now().getTime() - 16 * MINUTE_MS);
      return `Bearer ${signJwt({ alg: 'HS256', typ: 'JWT' }, accessTokenClaims(user, past), TEST_SECRET_KEY)}`;
    },
    INVALID_TOKEN,
  ],
];

describe("WWW-Authenticate on the bearer-token guard's 401", () => {
  const t = useSharedTestApp();
  let user: RegisteredUser;

  beforeAll(async () => {
    user = await registerUser(t);
  });

  function call(route: string, authorization: string | undefined): Promise<TestResponse> {
    const [method = 'GET', path = ''] = route.split(' ');
    const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
    return method === 'POST'
      ? t.request(path, {
          method,
          body: JSON.stringify({ refreshToken: user.refreshToken }),
          headers: { ...headers, 'content-type': 'application/json' },
        })
      : t.request(path, { method, headers });
  }

  it('should find exactly these protected routes among the registered ones', async () => {
    const guarded: string[] = [];
    for (const { method, url } of t.routes) {
      if (method === 'HEAD') {
        continue;
      }
      const response = await t.request(url, {
        method,
        ...(method === 'POST'
          ? { body: '{}', headers: { 'content-type': 'application/json' } }
          : {}),
      });
      if (response.status === 401 && response.text === JSON.stringify(UNAUTHORIZED_BODY)) {
        guarded.push(`${method} ${url}`);
      }
    }

    expect(guarded.sort()).toEqual([...PROTECTED].sort());
  });

  describe.each(PROTECTED)('%s', (route) => {
    it.each(CASES)(
      'should answer %s with the bare 401 and the challenge',
      async (_label, authorization, challenge) => {
        const response = await call(route, authorization(t, user));

        expect(challengeOf(response)).toEqual(bearerRefusal(challenge));
      },
    );
  });

  it('should not challenge a 401 about other credentials than the bearer token', async () => {
    const revoke = await t.post(
      REVOKE,
      { refreshToken: 'not-a-token-of-the-bearer' },
      user.accessToken,
    );
    const login = await t.post(LOGIN, { email: user.email, password: 'Wr0ng!pass' });
    const refresh = await t.post(REFRESH, { refreshToken: 'unknown' });

    expect(
      [revoke, login, refresh].map((response) => ({
        status: response.status,
        body: response.json(),
        challenge: response.headers.get('www-authenticate'),
      })),
    ).toEqual([
      { status: 401, body: errorBody(401, 'Refresh token inválido.'), challenge: null },
      { status: 401, body: errorBody(401, 'Credenciales inválidas.'), challenge: null },
      { status: 401, body: errorBody(401, 'Refresh token inválido.'), challenge: null },
    ]);
  });

  it('should send no challenge on a success', async () => {
    const response = await t.get(ME, user.accessToken);

    expect(response.status).toBe(200);
    expect(response.headers.get('www-authenticate')).toBeNull();
  });
});
