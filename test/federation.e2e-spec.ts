import { FederatedIdentity } from '../src/federation/entities/federated-identity.entity.js';
import { FederationCode } from '../src/federation/entities/federation-code.entity.js';
import { FederationFlow } from '../src/federation/entities/federation-flow.entity.js';
import { TokenCleanupService } from '../src/tokens/cleanup/token-cleanup.service.js';
import { User } from '../src/users/entities/user.entity.js';
import { createUser, registerUser, reloadUser } from './factories/user.factory.js';
import { auditRows } from './utils/audit-rows.js';
import { configurationProblemsOf } from './utils/configuration-problems.js';
import { useSharedTestApp } from './utils/create-test-app.js';
import { authResponse, errorBody, problemDetails } from './utils/expected-bodies.js';
import {
  browseUntil,
  callbackOf,
  FRONT_END,
  pkcePair,
  type ProviderLie,
  PUBLIC_URL,
  startOidcProvider,
  type TestOidcProvider,
} from './utils/federation-browser.js';
import { createHmac } from 'node:crypto';
import { decodeJwt } from './utils/jwt.js';
import {
  LOGIN,
  PASSKEY_LOGIN_OPTIONS,
  PASSKEY_REGISTER_OPTIONS,
  PASSKEY_REGISTER_VERIFY,
  REFRESH,
  TOTP_CONFIRM,
  TOTP_ENROLL,
} from './utils/routes.js';
import { SoftwareAuthenticator } from './utils/software-authenticator.js';

// Sign-in through other identity providers (issue 38), against panva's oidc-provider (a
// certified OpenID provider) started on loopback: an honest one, and two that lie about their
// ID tokens. The test is the browser: it follows the redirects, and stops at Keygate's callback.

const PROVIDERS = '/api/auth/federation/providers';
const TOKEN = '/api/auth/federation/token';
const INVALID_FLOW = 'El inicio de sesión con el proveedor no es válido o ya se usó.';
const INVALID_CODE = 'Código de inicio de sesión inválido o expirado.';
const REDIRECT_NOT_ALLOWED = 'La URL de retorno no está permitida.';
const MINUTE_MS = 60_000;
const PASSKEY_RP_ID = 'example.com';
const PASSKEY_ORIGIN = 'https://app.example.com';

/** RFC 6238 at `at` for a base32 secret, written here apart from the service's own code. */
function totp(secret: string, at: Date): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const char of secret.replace(/=+$/, '').toUpperCase()) {
    bits += alphabet.indexOf(char).toString(2).padStart(5, '0');
  }
  const key = Buffer.from(bits.match(/.{8}/g)?.map((byte) => parseInt(byte, 2)) ?? []);
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(at.getTime() / 30_000)));
  const mac = createHmac('sha1', key).update(counter).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

function providerEntry(id: string, issuer: string): Record<string, string> {
  return {
    id,
    name: `Proveedor ${id}`,
    type: 'oidc',
    issuer,
    clientId: 'keygate',
    clientSecret: `secret-of-${id}`,
  };
}

function federationEnvironment(
  providers: readonly Record<string, string>[],
): Record<string, string> {
  return {
    Federation__Providers: JSON.stringify(providers),
    Federation__PublicUrl: PUBLIC_URL,
    Federation__RedirectUrls: `${FRONT_END},https://other.example.com/back`,
    Federation__AllowInsecureIssuers: 'true',
    Federation__TimeoutSeconds: '2',
    Mfa__EncryptionKeys: Buffer.alloc(32, 0x38).toString('base64'),
    Passkeys__RpId: PASSKEY_RP_ID,
    Passkeys__RpName: 'Keygate de prueba',
    Passkeys__Origins: PASSKEY_ORIGIN,
    // Small, so the purge of expired flows and codes runs in several batches.
    TokenCleanup__BatchSize: '2',
  };
}

describe('federation off (Federation__Providers unset)', () => {
  const t = useSharedTestApp();

  it('should answer its routes as unknown routes', async () => {
    const unknown = await t.get('/api/auth/no-such-route');
    for (const path of [
      PROVIDERS,
      '/api/auth/federation/google/authorize',
      '/api/auth/federation/google/callback',
    ]) {
      const response = await t.get(path);
      expect(response.status).toBe(404);
      expect(Object.keys(response.json())).toEqual(Object.keys(unknown.json()));
    }
    const token = await t.post(TOKEN, { code: 'x', codeVerifier: 'y' });
    expect(token.status).toBe(404);
    expect(t.routes.some((route) => route.url.includes('federation'))).toBe(false);
  });
});

describe('Federation__Providers at start-up', () => {
  const base = {
    Jwt__SecretKey: 'a-test-secret-key-that-is-long-enough-0123456789',
    Federation__PublicUrl: 'https://id.example.com',
    Federation__RedirectUrls: 'https://app.example.com/back',
  };
  const cases: ReadonlyArray<[string, Record<string, string>, string]> = [
    ['not JSON', { Federation__Providers: '[{"id":' }, 'Federation__Providers is not valid JSON'],
    ['not an array', { Federation__Providers: '{"id":"x"}' }, 'must be a non-empty JSON array'],
    [
      'an unknown type',
      {
        Federation__Providers: JSON.stringify([
          { id: 'x', name: 'X', type: 'saml', clientId: 'c', clientSecret: 'TOPSECRET' },
        ]),
      },
      'provider 1 ("x"): "type" must be "oidc" or "github"',
    ],
    [
      'an oidc provider without issuer',
      {
        Federation__Providers: JSON.stringify([
          { id: 'x', name: 'X', type: 'oidc', clientId: 'c', clientSecret: 'TOPSECRET' },
        ]),
      },
      'provider 1 needs "issuer"',
    ],
    [
      'an http issuer',
      {
        Federation__Providers: JSON.stringify([
          {
            id: 'x',
            name: 'X',
            type: 'oidc',
            issuer: 'http://idp.example.com',
            clientId: 'c',
            clientSecret: 'TOPSECRET',
          },
        ]),
      },
      '"issuer" is http, which only Federation__AllowInsecureIssuers allows, on loopback',
    ],
    [
      'a repeated id',
      {
        Federation__Providers: JSON.stringify([
          { id: 'x', name: 'X', type: 'github', clientId: 'c', clientSecret: 'TOPSECRET' },
          { id: 'x', name: 'Y', type: 'github', clientId: 'c', clientSecret: 'TOPSECRET' },
        ]),
      },
      'provider 2 repeats the id "x"',
    ],
    [
      'no redirect URLs',
      {
        Federation__Providers: JSON.stringify([
          { id: 'x', name: 'X', type: 'github', clientId: 'c', clientSecret: 'TOPSECRET' },
        ]),
        Federation__RedirectUrls: '',
      },
      'Federation__RedirectUrls is required with Federation__Providers',
    ],
  ];

  it.each(cases)(
    'should refuse %s, naming the problem and never the secret',
    (_name, environment, problem) => {
      const message = configurationProblemsOf({ ...base, ...environment });
      expect(message).toContain(problem);
      expect(message).not.toContain('TOPSECRET');
    },
  );
});

describe('sign-in through an OpenID provider', () => {
  let honest: TestOidcProvider;
  let other: TestOidcProvider;
  let expired: TestOidcProvider;
  let wronglySigned: TestOidcProvider;
  const ids = ['honest', 'other', 'expired', 'forged'] as const;
  /** Providers that lie about one thing each, by the id Keygate knows them under. */
  const LIARS = {
    'aud-liar': 'wrong-audience',
    'nonce-liar': 'wrong-nonce',
    'iss-liar': 'wrong-issuer',
    'none-liar': 'unsigned',
    down: 'down',
    slow: 'slow',
  } as const satisfies Record<string, ProviderLie>;
  type Liar = keyof typeof LIARS;
  const liarIds = Object.keys(LIARS) as Liar[];
  const liars = {} as Record<Liar, TestOidcProvider>;
  const providerFor = (id: string, lie?: ProviderLie) =>
    startOidcProvider({
      clientId: 'keygate',
      clientSecret: `secret-of-${id}`,
      redirectUris: [callbackOf(id)],
      lie,
    });

  beforeAll(async () => {
    [honest, other, expired, wronglySigned] = await Promise.all([
      providerFor('honest'),
      providerFor('other'),
      providerFor('expired', 'expired'),
      providerFor('forged', 'wrong-signature'),
    ]);
    const started = await Promise.all(liarIds.map((id) => providerFor(id, LIARS[id])));
    liarIds.forEach((id, index) => (liars[id] = started[index]));
  });
  afterAll(async () => {
    await Promise.all(
      [honest, other, expired, wronglySigned, ...Object.values(liars)].map((p) => p?.close()),
    );
  });

  const t = useSharedTestApp(() => ({
    environment: federationEnvironment([
      ...ids.map((id, index) =>
        providerEntry(id, [honest, other, expired, wronglySigned][index].issuer),
      ),
      ...liarIds.map((id) => providerEntry(id, liars[id].issuer)),
    ]),
  }));

  /** Starts a flow at `provider` and follows it to Keygate's callback, as a browser would. */
  async function toCallback(
    provider: string,
    challenge: string,
    redirectTo = FRONT_END,
  ): Promise<URL> {
    const started = await t.request(
      `/api/auth/federation/${provider}/authorize?redirectTo=${encodeURIComponent(redirectTo)}&codeChallenge=${challenge}`,
      { redirect: 'manual' },
    );
    expect(started.status).toBe(302);
    return browseUntil(started.headers.get('location') ?? '', callbackOf(provider));
  }

  /** Opens the callback at Keygate; where it sends the browser. */
  async function openCallback(
    callback: URL,
  ): Promise<{ status: number; location: URL | null; text: string }> {
    const response = await t.request(`${callback.pathname}${callback.search}`, {
      redirect: 'manual',
    });
    const location = response.headers.get('location');
    return {
      status: response.status,
      location: location === null ? null : new URL(location),
      text: response.text,
    };
  }

  /** A whole sign-in up to the one-time code (or the error) at the front end. */
  async function signIn(provider: string, claims: Record<string, unknown>, source = honest) {
    await source.nextLogin(claims);
    const pkce = pkcePair();
    const callback = await toCallback(provider, pkce.challenge);
    const back = await openCallback(callback);
    expect(back.status).toBe(302);
    return { pkce, back: back.location!, callback };
  }

  async function exchange(
    code: string | null,
    verifier: string,
    extra: Record<string, unknown> = {},
  ) {
    return t.post(TOKEN, { code, codeVerifier: verifier, ...extra });
  }

  const identityCount = (userId: string) =>
    t.dataSource.getRepository(FederatedIdentity).countBy({ userId });

  it('should list the providers, and nothing of their secrets', async () => {
    const response = await t.get(PROVIDERS);
    expect(response.status).toBe(200);
    expect(response.json()).toEqual({
      providers: [...ids, ...liarIds].map((id) => ({ id, name: `Proveedor ${id}` })),
    });
    expect(response.text).not.toContain('secret-of');
  });

  it('should send the browser to the provider with PKCE, state and nonce', async () => {
    const { challenge } = pkcePair();
    const response = await t.request(
      `/api/auth/federation/honest/authorize?redirectTo=${encodeURIComponent(FRONT_END)}&codeChallenge=${challenge}`,
      { redirect: 'manual' },
    );
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location') ?? '');
    expect(location.origin).toBe(honest.issuer);
    const query = Object.fromEntries(location.searchParams);
    expect(query).toMatchObject({
      client_id: 'keygate',
      redirect_uri: callbackOf('honest'),
      response_type: 'code',
      scope: 'openid email profile',
      code_challenge_method: 'S256',
    });
    expect(query.state).toMatch(/^[\w-]{43}$/);
    expect(query.nonce).toMatch(/^[\w-]{43}$/);
    // The challenge towards the provider is Keygate's own, never the front end's.
    expect(query.code_challenge).toMatch(/^[\w-]{43}$/);
    expect(query.code_challenge).not.toBe(challenge);
  });

  it('should refuse a redirectTo not listed, with no redirect at all', async () => {
    const { challenge } = pkcePair();
    for (const redirectTo of [
      'https://evil.example.com/signed-in',
      `${FRONT_END}/more`,
      `${FRONT_END}?x=1`,
    ]) {
      const response = await t.get(
        `/api/auth/federation/honest/authorize?redirectTo=${encodeURIComponent(redirectTo)}&codeChallenge=${challenge}`,
      );
      expect(response.status).toBe(400);
      expect(response.headers.get('location')).toBeNull();
      expect(response.json()).toEqual(errorBody(400, REDIRECT_NOT_ALLOWED));
    }
    const noChallenge = await t.get(
      `/api/auth/federation/honest/authorize?redirectTo=${encodeURIComponent(FRONT_END)}`,
    );
    expect(noChallenge.status).toBe(400);
    expect(noChallenge.json()).toEqual(problemDetails(['codeChallenge']));
    const unknown = await t.get(
      `/api/auth/federation/nope/authorize?redirectTo=${encodeURIComponent(FRONT_END)}&codeChallenge=${challenge}`,
    );
    expect(unknown.json()).toEqual(errorBody(404, 'Proveedor de identidad no encontrado.'));
  });

  it('should make a new account for a new identity with a verified address, and sign it in', async () => {
    const { pkce, back } = await signIn('honest', {
      sub: 'new-1',
      email: 'Nueva@Example.com',
      email_verified: true,
      preferred_username: 'nueva',
    });
    expect(back.origin + back.pathname).toBe(FRONT_END);
    const code = back.searchParams.get('code');
    expect(code).toMatch(/^[\w-]{43}$/);
    const response = await exchange(code, pkce.verifier);
    expect(response.status).toBe(200);
    expect(response.json()).toEqual(
      authResponse({
        username: expect.stringMatching(/^nueva-[0-9a-f]{6}$/),
        email: 'nueva@example.com',
      }),
    );
    const user = await t.dataSource
      .getRepository(User)
      .findOneByOrFail({ email: 'nueva@example.com' });
    expect(user.emailVerifiedAt).not.toBeNull();
    // No password until the person sets one through the reset flow.
    const login = await t.post(LOGIN, { email: 'nueva@example.com', password: '' });
    expect(login.status).not.toBe(200);
    const rows = await auditRows(t.database, user.id);
    expect(rows.map((row) => row.type)).toEqual(
      expect.arrayContaining(['federation_signed_up', 'federation_login_succeeded']),
    );
  });

  it('should open the same account for a returning identity, whatever address it now gives', async () => {
    const first = await signIn('honest', {
      sub: 'returning-1',
      email: 'vuelve@example.com',
      email_verified: true,
    });
    const firstBody = (
      await exchange(first.back.searchParams.get('code'), first.pkce.verifier)
    ).json<{ user: { id: string } }>();
    const again = await signIn('honest', {
      sub: 'returning-1',
      email: 'someone-else@example.com',
      email_verified: false,
    });
    const response = await exchange(again.back.searchParams.get('code'), again.pkce.verifier);
    expect(response.status).toBe(200);
    expect(response.json<{ user: { id: string; email: string } }>().user).toMatchObject({
      id: firstBody.user.id,
      email: 'vuelve@example.com',
    });
  });

  it('should use a one-time code once, only with its verifier, and only for two minutes', async () => {
    const replay = await signIn('honest', {
      sub: 'code-1',
      email: 'code1@example.com',
      email_verified: true,
    });
    const code = replay.back.searchParams.get('code');
    expect((await exchange(code, replay.pkce.verifier)).status).toBe(200);
    expect((await exchange(code, replay.pkce.verifier)).json()).toEqual(
      errorBody(401, INVALID_CODE),
    );

    const stolen = await signIn('honest', {
      sub: 'code-1',
      email: 'code1@example.com',
      email_verified: true,
    });
    const stolenCode = stolen.back.searchParams.get('code');
    const wrong = await exchange(stolenCode, pkcePair().verifier);
    expect(wrong.json()).toEqual(errorBody(401, INVALID_CODE));
    // A wrong verifier burns the code: the thief's try costs the page nothing but a new sign-in.
    expect((await exchange(stolenCode, stolen.pkce.verifier)).json()).toEqual(
      errorBody(401, INVALID_CODE),
    );

    const late = await signIn('honest', {
      sub: 'code-1',
      email: 'code1@example.com',
      email_verified: true,
    });
    t.clock.advance(2 * MINUTE_MS);
    expect((await exchange(late.back.searchParams.get('code'), late.pkce.verifier)).json()).toEqual(
      errorBody(401, INVALID_CODE),
    );
  });

  it('should purge expired flows and one-time codes with the expired-token cleanup, in batches', async () => {
    const flows = t.dataSource.getRepository(FederationFlow);
    const codes = t.dataSource.getRepository(FederationCode);
    await flows.clear();
    await codes.clear();
    const { back, pkce } = await signIn('honest', {
      sub: 'purge-1',
      email: 'purge-1@example.com',
      email_verified: true,
    });
    for (let i = 0; i < 4; i += 1) {
      await t.request(
        `/api/auth/federation/honest/authorize?redirectTo=${encodeURIComponent(FRONT_END)}&codeChallenge=${pkcePair().challenge}`,
        { redirect: 'manual' },
      );
    }
    t.clock.advance(11 * MINUTE_MS);
    const fresh = pkcePair();
    const started = await t.request(
      `/api/auth/federation/honest/authorize?redirectTo=${encodeURIComponent(FRONT_END)}&codeChallenge=${fresh.challenge}`,
      { redirect: 'manual' },
    );
    expect(started.status).toBe(302);
    expect({ flows: await flows.count(), codes: await codes.count() }).toEqual({
      flows: 5,
      codes: 1,
    });

    await t.app.get(TokenCleanupService).purgeExpired();

    const left = await flows.find();
    expect(left.map((flow) => flow.codeChallenge)).toEqual([fresh.challenge]);
    expect(await codes.count()).toBe(0);
    const late = await exchange(back.searchParams.get('code'), pkce.verifier);
    expect(late.json()).toEqual(errorBody(401, INVALID_CODE));
  });

  it('should take a flow once: a replayed callback, or one it never started, gets 400 and no redirect', async () => {
    const pkce = pkcePair();
    await honest.nextLogin({ sub: 'replay-1', email: 'replay@example.com', email_verified: true });
    const callback = await toCallback('honest', pkce.challenge);
    expect((await openCallback(callback)).status).toBe(302);
    const replayed = await openCallback(callback);
    expect(replayed.status).toBe(400);
    expect(replayed.location).toBeNull();
    expect(JSON.parse(replayed.text)).toEqual(errorBody(400, INVALID_FLOW));

    const forged = new URL(callback);
    forged.searchParams.set('state', 'a-state-this-service-never-handed-out-000000');
    const refused = await openCallback(forged);
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.text)).toEqual(errorBody(400, INVALID_FLOW));
  });

  it('should refuse a flow answered at another provider’s callback', async () => {
    const { challenge } = pkcePair();
    await honest.nextLogin({ sub: 'mixup-1', email: 'mixup@example.com', email_verified: true });
    const callback = await toCallback('honest', challenge);
    const elsewhere = new URL(callback);
    elsewhere.pathname = '/api/auth/federation/other/callback';
    const back = await openCallback(elsewhere);
    expect(back.status).toBe(302);
    expect(back.location?.searchParams.get('error')).toBe('provider_mismatch');
    expect(back.location?.searchParams.get('code')).toBeNull();
  });

  it('should refuse an authorization response whose iss is another provider’s (RFC 9207)', async () => {
    const { challenge } = pkcePair();
    await honest.nextLogin({ sub: 'iss-1', email: 'iss@example.com', email_verified: true });
    const callback = await toCallback('honest', challenge);
    expect(callback.searchParams.get('iss')).toBe(honest.issuer);
    callback.searchParams.set('iss', other.issuer);
    const back = await openCallback(callback);
    expect(back.location?.searchParams.get('error')).toBe('provider_error');
    expect(back.location?.searchParams.get('code')).toBeNull();
  });

  it('should refuse an expired ID token', async () => {
    const { back } = await signIn(
      'expired',
      { sub: 'exp-1', email: 'exp@example.com', email_verified: true },
      expired,
    );
    expect(back.searchParams.get('error')).toBe('provider_error');
    expect(back.searchParams.get('code')).toBeNull();
  });

  it('should refuse an ID token signed with a key the provider does not publish', async () => {
    const { back } = await signIn(
      'forged',
      { sub: 'forged-1', email: 'forged@example.com', email_verified: true },
      wronglySigned,
    );
    expect(back.searchParams.get('error')).toBe('provider_error');
    expect(await t.dataSource.getRepository(User).countBy({ email: 'forged@example.com' })).toBe(0);
  });

  it.each([
    ['names another client in aud', 'aud-liar'],
    ['carries another flow’s nonce', 'nonce-liar'],
    ['names another issuer in iss', 'iss-liar'],
    ['is unsigned (alg none)', 'none-liar'],
  ] as const)('should refuse an ID token that %s, making no account', async (_lie, id) => {
    const email = `${id}@example.com`;
    const { back } = await signIn(id, { sub: `${id}-1`, email, email_verified: true }, liars[id]);
    expect(back.origin + back.pathname).toBe(FRONT_END);
    expect(back.searchParams.get('error')).toBe('provider_error');
    expect(back.searchParams.get('code')).toBeNull();
    expect(await t.dataSource.getRepository(User).countBy({ email })).toBe(0);
    expect(
      await t.dataSource.getRepository(FederatedIdentity).countBy({ subject: `${id}-1` }),
    ).toBe(0);
  });

  // Federation__TimeoutSeconds is 2 here; the bound below is generous (a hung request, not speed).
  it.each(['down', 'slow'] as const)(
    'should answer provider_unavailable within the timeout when the provider is %s',
    async (id) => {
      await liars[id].nextLogin({
        sub: `${id}-1`,
        email: `${id}@example.com`,
        email_verified: true,
      });
      const callback = await toCallback(id, pkcePair().challenge);
      const started = performance.now();
      const answer = await openCallback(callback);
      const seconds = (performance.now() - started) / 1000;
      expect(answer.status).toBe(302);
      expect(seconds).toBeLessThan(2 + 5);
      const back = answer.location!;
      expect(back.origin + back.pathname).toBe(FRONT_END);
      expect(back.searchParams.get('error')).toBe('provider_unavailable');
      expect(back.searchParams.get('code')).toBeNull();
      expect(await t.dataSource.getRepository(User).countBy({ email: `${id}@example.com` })).toBe(
        0,
      );
    },
  );

  it('should refuse a locked account signing in through its linked identity, as login does', async () => {
    const user = await registerUser(t);
    await t.dataSource.getRepository(User).update({ id: user.id }, { emailVerifiedAt: new Date() });
    const linked = await signIn('honest', {
      sub: 'locked-1',
      email: user.email,
      email_verified: true,
    });
    expect(
      (await exchange(linked.back.searchParams.get('code'), linked.pkce.verifier)).status,
    ).toBe(200);
    expect(await identityCount(user.id)).toBe(1);
    for (let attempt = 0; attempt < 5; attempt++) {
      await t.post(LOGIN, { email: user.email, password: 'Wrong!pass1' });
    }
    const lockedOut = errorBody(401, 'Cuenta bloqueada temporalmente. Intenta en 16 minuto(s).');
    expect((await t.post(LOGIN, { email: user.email, password: user.password })).json()).toEqual(
      lockedOut,
    );

    const { back } = await signIn('honest', {
      sub: 'locked-1',
      email: user.email,
      email_verified: true,
    });
    expect(back.searchParams.get('error')).toBe('account_locked');
    expect(back.searchParams.get('code')).toBeNull();
  });

  it('should tell the front end when the person refused at the provider', async () => {
    await honest.denyNext();
    const { challenge } = pkcePair();
    const back = await openCallback(await toCallback('honest', challenge));
    expect(back.location?.searchParams.get('error')).toBe('access_denied');
  });

  it('should ask an account with a second factor for its code, keeping the one-time code until then', async () => {
    const user = await registerUser(t);
    await t.dataSource.getRepository(User).update({ id: user.id }, { emailVerifiedAt: new Date() });
    const enrolled = await t.post(TOTP_ENROLL, { password: user.password }, user.accessToken);
    const secret = enrolled.json<{ secret: string }>().secret;
    const confirmed = await t.post(
      TOTP_CONFIRM,
      { code: totp(secret, t.clock.now()) },
      user.accessToken,
    );
    expect(confirmed.status).toBe(200);
    t.clock.advance(MINUTE_MS);
    const { back, pkce } = await signIn('honest', {
      sub: 'mfa-1',
      email: user.email,
      email_verified: true,
    });
    const code = back.searchParams.get('code');

    const without = await exchange(code, pkce.verifier);
    expect(without.json()).toEqual(errorBody(401, 'Se requiere el código de verificación.'));
    const wrong = await exchange(code, pkce.verifier, { secondFactorCode: '000000' });
    expect(wrong.json()).toEqual(errorBody(401, 'Código de verificación inválido.'));
    const right = await exchange(code, pkce.verifier, {
      secondFactorCode: totp(secret, t.clock.now()),
    });
    expect(right.status).toBe(200);
    expect(right.json<{ user: { id: string } }>().user.id).toBe(user.id);
  });

  it('should take a passkey as the second factor at the exchange, as login takes it', async () => {
    const user = await registerUser(t);
    const other = await registerUser(t);
    await t.dataSource.getRepository(User).update({ id: user.id }, { emailVerifiedAt: new Date() });
    const mine = new SoftwareAuthenticator(PASSKEY_RP_ID, PASSKEY_ORIGIN);
    const theirs = new SoftwareAuthenticator(PASSKEY_RP_ID, PASSKEY_ORIGIN);
    for (const [owner, authenticator] of [
      [user, mine],
      [other, theirs],
    ] as const) {
      const options = await t.post(
        PASSKEY_REGISTER_OPTIONS,
        { password: owner.password },
        owner.accessToken,
      );
      const registered = await t.post(
        PASSKEY_REGISTER_VERIFY,
        { response: authenticator.create(options.json()) },
        owner.accessToken,
      );
      expect(registered.status).toBe(201);
    }
    const enrolled = await t.post(TOTP_ENROLL, { password: user.password }, user.accessToken);
    const secret = enrolled.json<{ secret: string }>().secret;
    const confirmed = await t.post(
      TOTP_CONFIRM,
      { code: totp(secret, t.clock.now()) },
      user.accessToken,
    );
    expect(confirmed.status).toBe(200);
    const { back, pkce } = await signIn('honest', {
      sub: 'mfa-passkey-1',
      email: user.email,
      email_verified: true,
    });
    const code = back.searchParams.get('code');
    const assertion = async (authenticator: SoftwareAuthenticator) =>
      authenticator.get((await t.post(PASSKEY_LOGIN_OPTIONS, {})).json());

    const without = await exchange(code, pkce.verifier);
    const foreign = await exchange(code, pkce.verifier, { passkey: await assertion(theirs) });
    const countedAfterForeign = (await reloadUser(t, user.id)).failedLoginAttempts;
    const recorded = await assertion(mine);
    const right = await exchange(code, pkce.verifier, { passkey: recorded });
    const again = await exchange(code, pkce.verifier, { passkey: await assertion(mine) });

    expect(without.json()).toEqual(errorBody(401, 'Se requiere el código de verificación.'));
    expect(foreign.json()).toEqual(errorBody(401, 'Llave de acceso no reconocida.'));
    expect(right.status).toBe(200);
    expect(right.json()).toEqual(authResponse(user));
    expect(decodeJwt(right.json<{ accessToken: string }>().accessToken).payload.amr).toEqual([
      'fed',
      'hwk',
      'user',
    ]);
    // The refused passkey counted as at login (the success then cleared it); the code is spent.
    expect(countedAfterForeign).toBe(1);
    expect(again.json()).toEqual(errorBody(401, INVALID_CODE));
    const rows = await auditRows(t.database, user.id);
    expect(
      rows.filter((row) => row.type === 'federation_login_failed').map((row) => row.details),
    ).toEqual([
      expect.objectContaining({ reason: 'mfa_required' }),
      expect.objectContaining({ reason: 'bad_mfa_code' }),
    ]);
  });

  it('should link an identity to a signed-in account, list it, and unlink it unless it is the last way in', async () => {
    const user = await registerUser(t);
    const { challenge } = pkcePair();
    const started = await t.post(
      '/api/auth/federation/honest/link',
      { redirectTo: FRONT_END, codeChallenge: challenge, password: user.password },
      user.accessToken,
    );
    expect(started.status).toBe(200);
    await honest.nextLogin({
      sub: 'linked-1',
      email: 'elsewhere@example.com',
      email_verified: false,
    });
    const callback = await browseUntil(
      started.json<{ authorizeUrl: string }>().authorizeUrl,
      callbackOf('honest'),
    );
    const back = await openCallback(callback);
    expect(back.location?.searchParams.get('linked')).toBe('honest');
    const listed = await t.get('/api/auth/identities', user.accessToken);
    expect(listed.json()).toEqual({
      identities: [
        {
          id: expect.any(String),
          provider: 'honest',
          subject: 'linked-1',
          email: 'elsewhere@example.com',
          linkedAt: expect.any(String),
          lastUsedAt: expect.any(String),
        },
      ],
    });
    const wrongPassword = await t.post(
      '/api/auth/federation/honest/link',
      { redirectTo: FRONT_END, codeChallenge: challenge, password: 'Wrong!pass1' },
      user.accessToken,
    );
    expect(wrongPassword.json()).toEqual(errorBody(401, 'Credenciales inválidas.'));
    const id = listed.json<{ identities: Array<{ id: string }> }>().identities[0].id;
    const removed = await t.request(`/api/auth/identities/${id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${user.accessToken}` },
    });
    expect(removed.status).toBe(204);

    // An account made through a provider has no password: its only identity stays.
    const made = await signIn('honest', {
      sub: 'only-way-1',
      email: 'onlyway@example.com',
      email_verified: true,
    });
    const session = (await exchange(made.back.searchParams.get('code'), made.pkce.verifier)).json<{
      accessToken: string;
    }>();
    const own = (await t.get('/api/auth/identities', session.accessToken)).json<{
      identities: Array<{ id: string }>;
    }>();
    const refused = await t.request(`/api/auth/identities/${own.identities[0].id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${session.accessToken}` },
    });
    expect(refused.json()).toEqual(
      errorBody(409, 'No puedes quitar la única forma de iniciar sesión de la cuenta.'),
    );
  });

  describe('which account a new identity opens', () => {
    it('should never join an existing account on an address the provider does not vouch for', async () => {
      const victim = await registerUser(t);
      await t.dataSource
        .getRepository(User)
        .update({ id: victim.id }, { emailVerifiedAt: new Date() });
      for (const claims of [
        { email: victim.email, email_verified: false },
        { email: victim.email },
        { email: victim.email, email_verified: 'true' },
      ]) {
        const { back } = await signIn('honest', { sub: `liar-${Math.random()}`, ...claims });
        expect(back.searchParams.get('error')).toBe('account_not_linked');
        expect(back.searchParams.get('code')).toBeNull();
      }
      expect(await identityCount(victim.id)).toBe(0);
      expect((await t.post(LOGIN, { email: victim.email, password: victim.password })).status).toBe(
        200,
      );
    });

    it('should make no account for an address the provider does not vouch for', async () => {
      const { back } = await signIn('honest', {
        sub: 'unverified-new',
        email: 'nobody-yet@example.com',
        email_verified: false,
      });
      expect(back.searchParams.get('error')).toBe('email_not_verified');
      expect(
        await t.dataSource.getRepository(User).countBy({ email: 'nobody-yet@example.com' }),
      ).toBe(0);
    });

    it('should join a verified account when the provider verified the same address', async () => {
      const owner = await registerUser(t);
      await t.dataSource
        .getRepository(User)
        .update({ id: owner.id }, { emailVerifiedAt: new Date() });
      const { back, pkce } = await signIn('honest', {
        sub: 'joiner-1',
        email: owner.email,
        email_verified: true,
      });
      const response = await exchange(back.searchParams.get('code'), pkce.verifier);
      expect(response.status).toBe(200);
      expect(response.json<{ user: { id: string } }>().user.id).toBe(owner.id);
      // Joining takes nothing away: the owner's password still signs in.
      expect((await t.post(LOGIN, { email: owner.email, password: owner.password })).status).toBe(
        200,
      );
    });

    it('should give an account whose address was never verified to the verified person, with nothing of before', async () => {
      // The attacker registers the victim's address first, and sets up what could outlive the takeover.
      const attacker = await registerUser(t);
      const planted = Object.assign(new FederatedIdentity(), {
        id: '00000000-0000-4000-8000-000000000038',
        userId: attacker.id,
        provider: 'other',
        issuer: other.issuer,
        subject: 'attacker-at-other',
        email: attacker.email,
        linkedAt: new Date(),
        lastUsedAt: null,
      });
      await t.dataSource.getRepository(FederatedIdentity).insert(planted);

      const { back, pkce } = await signIn('honest', {
        sub: 'victim-1',
        email: attacker.email,
        email_verified: true,
      });
      expect(back.searchParams.get('error')).toBeNull();
      const response = await exchange(back.searchParams.get('code'), pkce.verifier);
      expect(response.status).toBe(200);
      expect(response.json<{ user: { id: string } }>().user.id).toBe(attacker.id);

      const account = await reloadUser(t, attacker.id);
      expect(account.emailVerifiedAt).not.toBeNull();
      // The attacker's password, session and identity all fail from now on.
      expect(
        (await t.post(LOGIN, { email: attacker.email, password: attacker.password })).json(),
      ).toEqual(errorBody(401, 'Credenciales inválidas.'));
      expect((await t.post(REFRESH, { refreshToken: attacker.refreshToken })).status).toBe(401);
      const identities = await t.dataSource
        .getRepository(FederatedIdentity)
        .findBy({ userId: attacker.id });
      expect(identities.map((identity) => identity.subject)).toEqual(['victim-1']);
      await other.nextLogin({
        sub: 'attacker-at-other',
        email: 'attacker-own@example.com',
        email_verified: true,
      });
      const pkce2 = pkcePair();
      const viaPlanted = await openCallback(await toCallback('other', pkce2.challenge));
      const planted2 = await exchange(
        viaPlanted.location?.searchParams.get('code') ?? null,
        pkce2.verifier,
      );
      expect(planted2.json<{ user: { id: string } }>().user.id).not.toBe(attacker.id);
      const rows = await auditRows(t.database, attacker.id);
      expect(rows.find((row) => row.type === 'federation_account_reclaimed')).toBeDefined();
    });

    it('should refuse a deactivated account as login does', async () => {
      const user = await createUser(t, {
        email: 'off@example.com',
        isActive: false,
        emailVerifiedAt: new Date(),
      });
      const { back } = await signIn('honest', {
        sub: 'off-1',
        email: user.email,
        email_verified: true,
      });
      expect(back.searchParams.get('error')).toBe('account_disabled');
      expect(await identityCount(user.id)).toBe(0);
    });
  });
});
