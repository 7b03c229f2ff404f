import { createHash } from 'node:crypto';
import {
  createKeygateClient,
  KeygateError,
  type KeygateClock,
  type KeygateStorage,
  type SessionState,
} from '../src/keygate-client.js';

// The client's rules in Node: a fake Keygate behind a fake fetch, a fake clock, no browser (so
// no tabs: the cross-tab proofs are test/browser/client-tabs.browser-spec.ts).

const BASE_URL = 'https://id.example.com';
const START = Date.parse('2026-01-01T00:00:00.000Z');
const LIFE_MS = 15 * 60_000;
const USER = {
  id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
  username: 'alice',
  email: 'alice@example.com',
  createdAt: '2026-01-01T00:00:00.000Z',
};

function base64url(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** A clock whose timers run only when the test moves it. */
class FakeClock implements KeygateClock {
  private time = START;
  private readonly timers = new Map<number, { at: number; callback: () => void }>();
  private next = 1;

  now(): number {
    return this.time;
  }

  setTimeout(callback: () => void, ms: number): number {
    const handle = this.next++;
    this.timers.set(handle, { at: this.time + ms, callback });
    return handle;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** When the earliest pending timer is due, as an offset from now. */
  pendingIn(): number | undefined {
    const times = [...this.timers.values()].map(({ at }) => at - this.time);
    return times.length === 0 ? undefined : Math.min(...times);
  }

  /** Time passes while the machine sleeps: no timer fires. */
  sleep(ms: number): void {
    this.time += ms;
  }

  async advance(ms: number): Promise<void> {
    this.time += ms;
    for (const [handle, timer] of [...this.timers]) {
      if (timer.at <= this.time) {
        this.timers.delete(handle);
        timer.callback();
      }
    }
    await settle();
  }
}

/** Lets every pending promise chain run. */
async function settle(): Promise<void> {
  for (let turn = 0; turn < 20; turn += 1) {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

type Handler = (request: Request, body: Record<string, unknown>) => Response | Promise<Response>;

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

function refused(status: number, message: string): Response {
  return json(status, { status, message, timestamp: '2026-01-01T00:00:00.000Z' });
}

const UNAUTHORIZED = () =>
  json(
    401,
    { status: 401, message: 'Unauthorized' },
    { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
  );

/** A Keygate that rotates for real: one live refresh token per session, numbered pairs. */
class FakeKeygate {
  readonly calls: {
    method: string;
    path: string;
    body: Record<string, unknown>;
    authorization: string | null;
  }[] = [];
  /** Overrides of single routes, by `METHOD path`; each is used once, then removed. */
  readonly once = new Map<string, Handler>();
  /** Overrides that stay until deleted. */
  readonly always = new Map<string, Handler>();
  /** How far Keygate's clock is ahead of the client's. */
  skewMs = 0;
  private live = new Set<string>();
  private issued = 0;

  constructor(private readonly clock: FakeClock) {}

  pair(sid = 'session-1'): Record<string, unknown> {
    this.issued += 1;
    const iat = Math.floor((this.clock.now() + this.skewMs) / 1000);
    const exp = iat + LIFE_MS / 1000;
    const accessToken = `${base64url({ alg: 'HS256' })}.${base64url({ sid, iat, exp, n: this.issued })}.sig`;
    const refreshToken = `refresh-${this.issued}`;
    this.live.add(refreshToken);
    return {
      accessToken,
      refreshToken,
      accessTokenExpiry: new Date(exp * 1000).toISOString(),
      user: USER,
    };
  }

  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const text = await request.text();
    const body = (text === '' ? {} : JSON.parse(text)) as Record<string, unknown>;
    const path = new URL(request.url).pathname;
    this.calls.push({
      method: request.method,
      path,
      body,
      authorization: request.headers.get('Authorization'),
    });
    const key = `${request.method} ${path}`;
    const override = this.once.get(key);
    if (override !== undefined) {
      this.once.delete(key);
      return override(request, body);
    }
    const lasting = this.always.get(key);
    if (lasting !== undefined) {
      return lasting(request, body);
    }
    switch (key) {
      case 'POST /api/auth/login':
        return json(200, this.pair());
      case 'POST /api/auth/refresh': {
        const token = body.refreshToken as string;
        if (!this.live.delete(token)) {
          return refused(401, 'Refresh token revocado.');
        }
        return json(200, this.pair());
      }
      case 'POST /api/auth/revoke':
        this.live.delete(body.refreshToken as string);
        return json(200, { message: 'Token revocado exitosamente.' });
      default:
        return json(200, USER);
    }
  };

  count(path: string): number {
    return this.calls.filter((call) => call.path === path).length;
  }
}

/** A storage of one's own, asynchronous as a database's would be. */
function asyncStorage(items: Map<string, string>): KeygateStorage {
  return {
    getItem: (key) => Promise.resolve(items.get(key) ?? null),
    setItem: (key, value) => Promise.resolve(void items.set(key, value)),
    removeItem: (key) => Promise.resolve(void items.delete(key)),
  };
}

describe('createKeygateClient in Node', () => {
  let clock: FakeClock;
  let keygate: FakeKeygate;

  beforeEach(() => {
    clock = new FakeClock();
    keygate = new FakeKeygate(clock);
  });

  function client(storage?: KeygateStorage, random = () => 0.5) {
    return createKeygateClient({
      baseUrl: `${BASE_URL}/`,
      storage,
      fetch: keygate.fetch,
      testOnly: { clock, random },
    });
  }

  async function loggedIn(storage?: KeygateStorage) {
    const keygateClient = client(storage);
    const changes: SessionState[] = [];
    keygateClient.onChange((state) => changes.push(state));
    await keygateClient.login({ email: 'alice@example.com', password: 'S3cure!pass' });
    return { client: keygateClient, changes };
  }

  it('should keep the pair of a login, tell the listeners, and send its bearer', async () => {
    const { client, changes } = await loggedIn();

    const me = await client.me();

    expect(me).toEqual(USER);
    expect(changes).toEqual([{ user: USER, accessTokenExpiry: '2026-01-01T00:15:00.000Z' }]);
    expect(keygate.calls.at(-1)).toEqual({
      method: 'GET',
      path: '/api/auth/me',
      body: {},
      authorization: `Bearer ${await client.getAccessToken()}`,
    });
  });

  it("should throw the interface's status and message unchanged, and ask for the second factor's code", async () => {
    const keygateClient = client();
    keygate.once.set('POST /api/auth/login', () =>
      refused(401, 'Se requiere el código de verificación.'),
    );

    const error = await keygateClient
      .login({ email: 'alice@example.com', password: 'S3cure!pass' })
      .catch((e: unknown) => e);
    await keygateClient.login({
      email: 'alice@example.com',
      password: 'S3cure!pass',
      code: '123456',
    });

    expect(error).toBeInstanceOf(KeygateError);
    expect(error).toMatchObject({
      status: 401,
      message: 'Se requiere el código de verificación.',
      codeRequired: true,
      sessionEnded: false,
    });
    expect(keygate.calls.at(-1)?.body).toEqual({
      email: 'alice@example.com',
      password: 'S3cure!pass',
      code: '123456',
    });
    expect(await keygateClient.getAccessToken()).toEqual(expect.any(String));
  });

  it('should throw problem details as a KeygateError with their title and whole body', async () => {
    const problem = {
      type: 'https://tools.ietf.org/html/rfc9110#section-15.5.1',
      title: 'One or more validation errors occurred.',
      status: 400,
      errors: { email: ['email must be an email'] },
    };
    keygate.once.set('POST /api/auth/register', () => json(400, problem));

    const error = await client()
      .register({ username: 'alice', email: 'nope', password: 'S3cure!pass' })
      .catch((e: unknown) => e);

    expect(error).toMatchObject({
      status: 400,
      message: 'One or more validation errors occurred.',
      body: problem,
    });
  });

  it('should refresh once for concurrent callers in one tab (single flight)', async () => {
    const { client } = await loggedIn();

    const pairs = await Promise.all([client.refresh(), client.refresh(), client.refresh()]);

    expect(keygate.count('/api/auth/refresh')).toBe(1);
    expect(new Set(pairs.map((pair) => pair.refreshToken))).toEqual(new Set(['refresh-2']));
  });

  it('should refresh shortly before expiry, not before', async () => {
    const { client } = await loggedIn();
    const first = await client.getAccessToken();

    await clock.advance(LIFE_MS - 61_000);
    const early = await client.getAccessToken();
    await clock.advance(1_000);
    const due = await client.getAccessToken();

    expect(early).toBe(first);
    expect(due).not.toBe(first);
    expect(keygate.count('/api/auth/refresh')).toBe(1);
  });

  it.each([-86_400_000, 86_400_000])(
    'should time refreshes by the token’s life, not by a clock %i ms off Keygate’s',
    async (skewMs) => {
      keygate.skewMs = skewMs;
      const { client } = await loggedIn();
      const first = await client.getAccessToken();

      await clock.advance(LIFE_MS - 61_000);
      expect(await client.getAccessToken()).toBe(first);
      await clock.advance(1_000);
      expect(await client.getAccessToken()).not.toBe(first);
      expect(keygate.count('/api/auth/refresh')).toBe(1);
    },
  );

  it('should refresh when a tab that slept through its timer becomes visible again', async () => {
    const page = Object.assign(new EventTarget(), { visibilityState: 'hidden' });
    Object.assign(globalThis, { document: page });
    try {
      const { client } = await loggedIn();
      const first = await client.getAccessToken();
      clock.sleep(LIFE_MS);
      expect(keygate.count('/api/auth/refresh')).toBe(0);

      page.visibilityState = 'visible';
      page.dispatchEvent(new Event('visibilitychange'));
      await settle();

      expect(keygate.count('/api/auth/refresh')).toBe(1);
      expect(await client.getAccessToken()).not.toBe(first);
    } finally {
      Reflect.deleteProperty(globalThis, 'document');
    }
  });

  it('should schedule the proactive refresh a random part of the margin before it is due', async () => {
    const low = client(undefined, () => 0);
    await low.login({ email: 'alice@example.com', password: 'S3cure!pass' });
    const lowDelay = clock.pendingIn();
    const high = client(undefined, () => 0.999);
    await high.login({ email: 'alice@example.com', password: 'S3cure!pass' });

    expect(lowDelay).toBe(LIFE_MS - 60_000);
    expect(clock.pendingIn()).toBeCloseTo(LIFE_MS - 60_000 * 1.4995, -1);

    await clock.advance(LIFE_MS - 60_000);
    expect(keygate.count('/api/auth/refresh')).toBe(2);
  });

  it('should add the bearer to the application’s fetch, and on a 401 refresh once and retry once', async () => {
    const { client } = await loggedIn();
    const seen: (string | null)[] = [];
    keygate.once.set('GET /api/orders', (request) => {
      seen.push(request.headers.get('Authorization'));
      return json(401, { error: 'expired' });
    });

    const answer = await client.fetch(`${BASE_URL}/api/orders`, {
      headers: { Accept: 'application/json' },
    });

    expect(answer.status).toBe(200);
    expect(keygate.count('/api/auth/refresh')).toBe(1);
    const [, retried] = keygate.calls.filter((call) => call.path === '/api/orders');
    expect(retried.authorization).toBe(`Bearer ${await client.getAccessToken()}`);
    expect(retried.authorization).not.toBe(seen[0]);
  });

  it('should give the second 401 back rather than refresh again', async () => {
    const { client } = await loggedIn();
    keygate.always.set('GET /api/orders', UNAUTHORIZED);

    const answer = await client.fetch(`${BASE_URL}/api/orders`);

    expect(answer.status).toBe(401);
    expect(keygate.count('/api/orders')).toBe(2);
    expect(keygate.count('/api/auth/refresh')).toBe(1);
  });

  it('should keep the session on a network error, having asked exactly once more (an answer may have been lost)', async () => {
    const { client, changes } = await loggedIn();
    const lost = new TypeError('fetch failed');
    keygate.once.set('POST /api/auth/refresh', () => Promise.reject(lost));

    const pair = await client.refresh();

    const presented = keygate.calls
      .filter((call) => call.path === '/api/auth/refresh')
      .map((call) => call.body);
    expect(presented).toEqual([{ refreshToken: 'refresh-1' }, { refreshToken: 'refresh-1' }]);
    expect(pair.refreshToken).toBe('refresh-2');
    expect(changes.at(-1)).not.toBeNull();
  });

  it('should keep the session through network errors, retrying with a capped backoff', async () => {
    const { client, changes } = await loggedIn();
    keygate.always.set('POST /api/auth/refresh', () =>
      Promise.reject(new TypeError('fetch failed')),
    );

    const error = await client.refresh().catch((e: unknown) => e);
    const delays = [clock.pendingIn()];
    for (let attempt = 0; attempt < 8; attempt += 1) {
      await clock.advance(clock.pendingIn() ?? 0);
      delays.push(clock.pendingIn());
    }
    keygate.always.delete('POST /api/auth/refresh');
    await clock.advance(clock.pendingIn() ?? 0);

    expect(error).toBeInstanceOf(TypeError);
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]);
    // Each attempt is one refresh asked twice (the second for an answer that may have been lost).
    expect(keygate.count('/api/auth/refresh')).toBe(2 * 9 + 1);
    expect(changes.filter((state) => state === null)).toEqual([]);
    expect(await client.getAccessToken()).toEqual(expect.any(String));
    // Back to the schedule before expiry once a refresh went through.
    expect(clock.pendingIn()).toBe(LIFE_MS - 60_000 * 1.25);
  });

  it('should keep the session on a 5xx, throwing its status and message', async () => {
    const { client, changes } = await loggedIn();
    keygate.once.set('POST /api/auth/refresh', () => refused(503, 'Service Unavailable'));

    const error = await client.refresh().catch((e: unknown) => e);

    expect(error).toMatchObject({
      status: 503,
      message: 'Service Unavailable',
      sessionEnded: false,
    });
    expect(changes.at(-1)).not.toBeNull();
    expect(await client.getAccessToken()).toEqual(expect.any(String));
    expect(keygate.count('/api/auth/refresh')).toBe(1);
  });

  it.each(['Refresh token inválido.', 'Refresh token revocado.', 'Refresh token expirado.'])(
    'should sign out on the refresh refusal %s, and forget the stored session',
    async (message) => {
      const storage = new Map<string, string>();
      const stored: KeygateStorage = {
        getItem: (key) => storage.get(key) ?? null,
        setItem: (key, value) => void storage.set(key, value),
        removeItem: (key) => void storage.delete(key),
      };
      const { client, changes } = await loggedIn(stored);
      keygate.once.set('POST /api/auth/refresh', () => refused(401, message));

      const error = await client.refresh().catch((e: unknown) => e);

      expect(error).toMatchObject({ status: 401, message, sessionEnded: true });
      expect(changes.at(-1)).toBeNull();
      expect(await client.getAccessToken()).toBeNull();
      expect(storage.size).toBe(0);
    },
  );

  it.each([
    [401, 'Cuenta desactivada.'],
    [401, 'Email no verificado.'],
  ])('should keep the session on any other refusal (%i %s)', async (status, message) => {
    const { client, changes } = await loggedIn();
    keygate.once.set('POST /api/auth/refresh', () => refused(status, message));

    const error = await client.refresh().catch((e: unknown) => e);

    expect(error).toMatchObject({ status, message, sessionEnded: false });
    expect(changes.at(-1)).not.toBeNull();
  });

  it('should read storage again before wiping: a refusal after a sibling rotated adopts the newer pair', async () => {
    const storage = new Map<string, string>();
    const shared: KeygateStorage = asyncStorage(storage);
    const { client: first, changes } = await loggedIn(shared);
    const second = client(shared);
    let sibling = '';
    // While the first client's refresh is on its way, the sibling rotates and it is refused.
    keygate.once.set('POST /api/auth/refresh', async () => {
      sibling = (await second.refresh()).refreshToken;
      return refused(401, 'Refresh token revocado.');
    });

    const pair = await first.refresh();

    expect(pair.refreshToken).toBe(sibling);
    expect(changes.at(-1)).not.toBeNull();
    expect(JSON.parse(storage.get('keygate.session') ?? '{}')).toMatchObject({
      refreshToken: sibling,
    });
  });

  it('should restore a session from a storage of its own', async () => {
    const storage = new Map<string, string>();
    const own: KeygateStorage = asyncStorage(storage);
    await loggedIn(own);

    const restored = client(own);
    const changes: SessionState[] = [];
    restored.onChange((state) => changes.push(state));

    expect(await restored.me()).toEqual(USER);
    expect(changes).toEqual([{ user: USER, accessTokenExpiry: '2026-01-01T00:15:00.000Z' }]);
    expect(keygate.count('/api/auth/refresh')).toBe(0);
  });

  it('should log out: revoke the refresh token with the bearer, forget the session and tell the listeners', async () => {
    const { client, changes } = await loggedIn();
    const token = await client.getAccessToken();

    await client.logout();

    expect(keygate.calls.at(-1)).toEqual({
      method: 'POST',
      path: '/api/auth/revoke',
      body: { refreshToken: 'refresh-1' },
      authorization: `Bearer ${token}`,
    });
    expect(changes.at(-1)).toBeNull();
    expect(await client.getAccessToken()).toBeNull();
  });

  it('should not refresh on a wrong password at a bearer route, only on the guard’s challenge', async () => {
    const { client } = await loggedIn();
    keygate.once.set('POST /api/auth/password/change', () =>
      refused(401, 'Credenciales inválidas.'),
    );

    const error = await client
      .changePassword({ currentPassword: 'wrong', newPassword: 'N3w!secure' })
      .catch((e: unknown) => e);

    expect(error).toMatchObject({ status: 401, message: 'Credenciales inválidas.' });
    expect(keygate.count('/api/auth/refresh')).toBe(0);
  });

  it('should refresh once and retry once on the guard’s challenge at a Keygate route', async () => {
    const { client } = await loggedIn();
    keygate.once.set('GET /api/auth/me', UNAUTHORIZED);

    expect(await client.me()).toEqual(USER);
    expect(keygate.count('/api/auth/refresh')).toBe(1);
    expect(keygate.count('/api/auth/me')).toBe(2);
  });

  it('should name its refresh token where the routes need it', async () => {
    const { client } = await loggedIn();

    await client.listSessions();
    const list = keygate.calls.at(-1);
    await client.revokeAllSessions({ keepCurrent: true });
    const keep = keygate.calls.at(-1);

    expect(list?.path).toBe('/api/auth/sessions');
    expect(keep).toMatchObject({
      path: '/api/auth/sessions/revoke-all',
      body: { keepCurrent: true, refreshToken: 'refresh-1' },
    });
    expect(await client.getAccessToken()).toEqual(expect.any(String));
    await client.revokeAllSessions();
    expect(keygate.calls.at(-1)?.body).toEqual({});
    expect(await client.getAccessToken()).toBeNull();
  });
});

// Passkeys: a fake `navigator.credentials` stands for the browser's WebAuthn (the real one is
// test/browser/client-passkeys.browser-spec.ts). Without `PublicKeyCredential`'s JSON helpers
// and `toJSON()`, the client decodes and encodes base64url itself.
describe('createKeygateClient with passkeys', () => {
  const CREATION = {
    challenge: 'AQIDBA',
    rp: { name: 'Keygate', id: 'example.com' },
    user: { id: 'dXNlci0x', name: 'alice@example.com', displayName: 'alice' },
    pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
    timeout: 300000,
    excludeCredentials: [{ id: '_-8', type: 'public-key', transports: ['internal'] }],
  };
  const REQUEST = { challenge: 'BQYH', rpId: 'example.com', userVerification: 'required' };
  const PASSKEY = {
    id: '0b7e3a52-5d2f-4c2e-9f7e-1c4b8f0d2a61',
    name: 'Portátil',
    createdAt: '2026-01-01T00:00:00.000Z',
    lastUsedAt: null,
    isBackupEligible: false,
    isBackedUp: false,
    transports: ['internal'],
  };
  const ATTESTATION_JSON = { id: 'cred', type: 'public-key', response: { made: 'by toJSON' } };
  const ASSERTION_JSON = { id: 'cred', type: 'public-key', response: { signed: 'by toJSON' } };

  let clock: FakeClock;
  let keygate: FakeKeygate;
  let created: CredentialCreationOptions[];
  let asked: CredentialRequestOptions[];
  /** What the fake browser answers: a credential, or a refusal to throw. */
  let browserCreates: () => unknown;
  let browserGets: () => unknown;

  function bytes(...values: number[]): ArrayBuffer {
    return new Uint8Array(values).buffer;
  }

  function withJSON(json: object): unknown {
    return { toJSON: () => json };
  }

  beforeEach(() => {
    clock = new FakeClock();
    keygate = new FakeKeygate(clock);
    keygate.always.set('POST /api/auth/passkeys/register/options', () => json(200, CREATION));
    keygate.always.set('POST /api/auth/passkeys/register/verify', () => json(201, PASSKEY));
    keygate.always.set('POST /api/auth/passkeys/login/options', () => json(200, REQUEST));
    keygate.always.set('POST /api/auth/passkeys/login/verify', () => json(200, keygate.pair()));
    created = [];
    asked = [];
    browserCreates = () => withJSON(ATTESTATION_JSON);
    browserGets = () => withJSON(ASSERTION_JSON);
    Object.defineProperty(globalThis, 'navigator', {
      configurable: true,
      value: {
        credentials: {
          create: (options: CredentialCreationOptions) => {
            created.push(options);
            return Promise.resolve().then(browserCreates);
          },
          get: (options: CredentialRequestOptions) => {
            asked.push(options);
            return Promise.resolve().then(browserGets);
          },
        },
      },
    });
  });

  afterEach(() => {
    delete (globalThis as { navigator?: unknown }).navigator;
    delete (globalThis as { PublicKeyCredential?: unknown }).PublicKeyCredential;
  });

  function client(storage?: KeygateStorage) {
    return createKeygateClient({
      baseUrl: BASE_URL,
      storage,
      fetch: keygate.fetch,
      testOnly: { clock, random: () => 0.5 },
    });
  }

  async function loggedIn() {
    const keygateClient = client();
    await keygateClient.login({ email: 'alice@example.com', password: 'S3cure!pass' });
    return keygateClient;
  }

  function passkeyCalls() {
    return keygate.calls
      .filter(({ path }) => path.startsWith('/api/auth/passkeys') || path === '/api/auth/login')
      .map(({ method, path, body, authorization }) => ({
        method,
        path,
        body,
        bearer: authorization !== null,
      }));
  }

  it('should register a passkey with the password: options, the browser, the check; and give the passkey', async () => {
    const keygateClient = await loggedIn();

    const passkey = await keygateClient.registerPasskey({
      password: 'S3cure!pass',
      name: 'Portátil',
    });

    expect(passkey).toEqual(PASSKEY);
    expect(passkeyCalls().slice(1)).toEqual([
      {
        method: 'POST',
        path: '/api/auth/passkeys/register/options',
        body: { password: 'S3cure!pass' },
        bearer: true,
      },
      {
        method: 'POST',
        path: '/api/auth/passkeys/register/verify',
        body: { response: ATTESTATION_JSON, name: 'Portátil' },
        bearer: true,
      },
    ]);
    const publicKey = created[0]?.publicKey;
    expect(new Uint8Array(publicKey?.challenge as ArrayBuffer)).toEqual(
      new Uint8Array([1, 2, 3, 4]),
    );
    expect(new TextDecoder().decode(publicKey?.user.id as ArrayBuffer)).toBe('user-1');
    expect(publicKey?.user).toMatchObject({ name: 'alice@example.com', displayName: 'alice' });
    expect(publicKey?.rp).toEqual({ name: 'Keygate', id: 'example.com' });
    expect(
      publicKey?.excludeCredentials?.map(({ id, transports }) => [
        new Uint8Array(id as ArrayBuffer),
        transports,
      ]),
    ).toEqual([[new Uint8Array([0xff, 0xef]), ['internal']]]);
  });

  it('should register a passkey with a passkey as the proof, and no name when none is given', async () => {
    const keygateClient = await loggedIn();

    await keygateClient.registerPasskey({ passkey: true });

    expect(passkeyCalls().slice(1)).toEqual([
      { method: 'POST', path: '/api/auth/passkeys/login/options', body: {}, bearer: false },
      {
        method: 'POST',
        path: '/api/auth/passkeys/register/options',
        body: { passkey: ASSERTION_JSON },
        bearer: true,
      },
      {
        method: 'POST',
        path: '/api/auth/passkeys/register/verify',
        body: { response: ATTESTATION_JSON },
        bearer: true,
      },
    ]);
    expect(asked).toHaveLength(1);
    expect(asked[0]?.mediation).toBeUndefined();
  });

  it("should use the browser's JSON helpers where it has them", async () => {
    const parsedCreation = { parsed: 'creation' };
    const parsedRequest = { parsed: 'request' };
    Object.defineProperty(globalThis, 'PublicKeyCredential', {
      configurable: true,
      value: {
        parseCreationOptionsFromJSON: (options: unknown) =>
          options === undefined ? undefined : parsedCreation,
        parseRequestOptionsFromJSON: (options: unknown) =>
          options === undefined ? undefined : parsedRequest,
      },
    });
    const keygateClient = await loggedIn();

    await keygateClient.registerPasskey({ passkey: true });

    expect(created[0]?.publicKey).toBe(parsedCreation);
    expect(asked[0]?.publicKey).toBe(parsedRequest);
  });

  it('should encode a credential as toJSON() does where the browser has no toJSON()', async () => {
    browserCreates = () => ({
      id: '_-8',
      rawId: bytes(0xff, 0xef),
      type: 'public-key',
      authenticatorAttachment: 'platform',
      getClientExtensionResults: () => ({}),
      response: {
        clientDataJSON: bytes(1),
        attestationObject: bytes(2, 3),
        getTransports: () => ['internal'],
        getAuthenticatorData: () => bytes(4),
        getPublicKey: () => bytes(5),
        getPublicKeyAlgorithm: () => -7,
      },
    });
    browserGets = () => ({
      id: '_-8',
      rawId: bytes(0xff, 0xef),
      type: 'public-key',
      authenticatorAttachment: null,
      getClientExtensionResults: () => ({}),
      response: {
        clientDataJSON: bytes(1),
        authenticatorData: bytes(4),
        signature: bytes(6, 7, 8),
        userHandle: new TextEncoder().encode('user-1').buffer,
      },
    });
    const keygateClient = await loggedIn();

    await keygateClient.registerPasskey({ passkey: true });

    expect(new Uint8Array(asked[0]?.publicKey?.challenge as ArrayBuffer)).toEqual(
      new Uint8Array([5, 6, 7]),
    );
    expect(keygate.calls.find(({ path }) => path.endsWith('/register/options'))?.body).toEqual({
      passkey: {
        id: '_-8',
        rawId: '_-8',
        type: 'public-key',
        clientExtensionResults: {},
        response: {
          clientDataJSON: 'AQ',
          authenticatorData: 'BA',
          signature: 'BgcI',
          userHandle: 'dXNlci0x',
        },
      },
    });
    expect(keygate.calls.at(-1)?.body).toEqual({
      response: {
        id: '_-8',
        rawId: '_-8',
        type: 'public-key',
        authenticatorAttachment: 'platform',
        clientExtensionResults: {},
        response: {
          clientDataJSON: 'AQ',
          attestationObject: 'AgM',
          transports: ['internal'],
          authenticatorData: 'BA',
          publicKey: 'BQ',
          publicKeyAlgorithm: -7,
        },
      },
    });
  });

  it('should sign in with a passkey and keep the session as login does', async () => {
    const items = new Map<string, string>();
    const keygateClient = client(asyncStorage(items));
    const changes: SessionState[] = [];
    keygateClient.onChange((state) => changes.push(state));
    const controller = new AbortController();

    const auth = await keygateClient.signInWithPasskey({
      mediation: 'conditional',
      signal: controller.signal,
    });

    expect(passkeyCalls()).toEqual([
      { method: 'POST', path: '/api/auth/passkeys/login/options', body: {}, bearer: false },
      {
        method: 'POST',
        path: '/api/auth/passkeys/login/verify',
        body: { response: ASSERTION_JSON },
        bearer: false,
      },
    ]);
    expect(asked[0]).toMatchObject({ mediation: 'conditional', signal: controller.signal });
    expect(changes).toEqual([{ user: USER, accessTokenExpiry: '2026-01-01T00:15:00.000Z' }]);
    expect(await keygateClient.getAccessToken()).toBe(auth.accessToken);
    expect(JSON.parse(items.get('keygate.session') ?? '{}')).toMatchObject({
      refreshToken: auth.refreshToken,
      sid: 'session-1',
    });
    await keygateClient.me();
    expect(keygate.calls.at(-1)?.authorization).toBe(`Bearer ${auth.accessToken}`);
  });

  it("should answer login's second factor with a passkey when Keygate asks for it, and only then", async () => {
    keygate.once.set('POST /api/auth/login', () =>
      refused(401, 'Se requiere el código de verificación.'),
    );
    const keygateClient = client();

    const auth = await keygateClient.login({
      email: 'alice@example.com',
      password: 'S3cure!pass',
      passkey: true,
    });

    expect(passkeyCalls()).toEqual([
      {
        method: 'POST',
        path: '/api/auth/login',
        body: { email: 'alice@example.com', password: 'S3cure!pass' },
        bearer: false,
      },
      { method: 'POST', path: '/api/auth/passkeys/login/options', body: {}, bearer: false },
      {
        method: 'POST',
        path: '/api/auth/login',
        body: { email: 'alice@example.com', password: 'S3cure!pass', passkey: ASSERTION_JSON },
        bearer: false,
      },
    ]);
    expect(await keygateClient.getAccessToken()).toBe(auth.accessToken);

    // An account without a second factor: the password is enough, the browser is not asked.
    await client().login({ email: 'bob@example.com', password: 'S3cure!pass', passkey: true });
    expect(asked).toHaveLength(1);
    expect(keygate.calls.at(-1)?.body).toEqual({
      email: 'bob@example.com',
      password: 'S3cure!pass',
    });
  });

  it('should throw other refusals of the password unchanged, without asking the browser', async () => {
    keygate.once.set('POST /api/auth/login', () => refused(401, 'Credenciales inválidas.'));

    const error = await client()
      .login({ email: 'alice@example.com', password: 'wrong', passkey: true })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(KeygateError);
    expect(error).toMatchObject({ status: 401, message: 'Credenciales inválidas.' });
    expect(asked).toHaveLength(0);
  });

  it("should throw Keygate's refusals as KeygateErrors with the interface's status and message", async () => {
    keygate.once.set('POST /api/auth/passkeys/login/verify', () =>
      refused(401, 'Llave de acceso no reconocida.'),
    );
    const keygateClient = client();
    const changes: SessionState[] = [];
    keygateClient.onChange((state) => changes.push(state));

    const error = await keygateClient.signInWithPasskey().catch((e: unknown) => e);

    expect(error).toBeInstanceOf(KeygateError);
    expect(error).toMatchObject({
      status: 401,
      message: 'Llave de acceso no reconocida.',
      body: {
        status: 401,
        message: 'Llave de acceso no reconocida.',
        timestamp: expect.any(String),
      },
    });
    expect(changes).toEqual([]);
    expect(await keygateClient.getAccessToken()).toBeNull();
  });

  it("should rethrow the browser's refusal as it is, and send nothing more", async () => {
    const cancelled = new DOMException(
      'The operation either timed out or was not allowed.',
      'NotAllowedError',
    );
    browserCreates = () => {
      throw cancelled;
    };
    browserGets = () => {
      throw cancelled;
    };
    const keygateClient = await loggedIn();

    const registering = await keygateClient
      .registerPasskey({ password: 'S3cure!pass' })
      .catch((e: unknown) => e);
    const signingIn = await keygateClient.signInWithPasskey().catch((e: unknown) => e);

    expect(registering).toBe(cancelled);
    expect(signingIn).toBe(cancelled);
    expect(keygate.count('/api/auth/passkeys/register/verify')).toBe(0);
    expect(keygate.count('/api/auth/passkeys/login/verify')).toBe(0);
    expect(await keygateClient.getAccessToken()).toEqual(expect.any(String));
  });

  it('should list, rename and remove passkeys with the bearer', async () => {
    keygate.always.set('GET /api/auth/passkeys', () => json(200, { passkeys: [PASSKEY] }));
    keygate.always.set(`PATCH /api/auth/passkeys/${PASSKEY.id}`, () =>
      json(200, { ...PASSKEY, name: 'Teléfono' }),
    );
    keygate.always.set(
      `DELETE /api/auth/passkeys/${PASSKEY.id}`,
      () => new Response(null, { status: 204 }),
    );
    const keygateClient = await loggedIn();

    expect(await keygateClient.listPasskeys()).toEqual({ passkeys: [PASSKEY] });
    expect(await keygateClient.renamePasskey(PASSKEY.id, { name: 'Teléfono' })).toEqual({
      ...PASSKEY,
      name: 'Teléfono',
    });
    expect(await keygateClient.removePasskey(PASSKEY.id)).toBeUndefined();
    expect(passkeyCalls().slice(1)).toEqual([
      { method: 'GET', path: '/api/auth/passkeys', body: {}, bearer: true },
      {
        method: 'PATCH',
        path: `/api/auth/passkeys/${PASSKEY.id}`,
        body: { name: 'Teléfono' },
        bearer: true,
      },
      { method: 'DELETE', path: `/api/auth/passkeys/${PASSKEY.id}`, body: {}, bearer: true },
    ]);
  });

  it('should refuse without WebAuthn before asking Keygate for anything, and treat no credential as a refusal', async () => {
    const keygateClient = await loggedIn();
    delete (globalThis as { navigator?: unknown }).navigator;
    const before = keygate.calls.length;

    const registering = await keygateClient
      .registerPasskey({ password: 'S3cure!pass' })
      .catch((e: unknown) => e);
    const signingIn = await keygateClient.signInWithPasskey().catch((e: unknown) => e);

    expect(registering).toBeInstanceOf(DOMException);
    expect(registering).toMatchObject({ name: 'NotSupportedError' });
    expect(signingIn).toMatchObject({ name: 'NotSupportedError' });
    expect(keygate.calls.length).toBe(before);

    Object.defineProperty(globalThis, 'navigator', {
      configurable: true,
      value: { credentials: { get: () => Promise.resolve(null) } },
    });
    const nothing = await keygateClient.signInWithPasskey().catch((e: unknown) => e);
    expect(nothing).toBeInstanceOf(DOMException);
    expect(nothing).toMatchObject({ name: 'NotAllowedError' });
    expect(keygate.count('/api/auth/passkeys/login/verify')).toBe(0);
  });
});

describe('createKeygateClient with other identity providers', () => {
  const FRONT_END = 'https://app.example.com/signed-in';
  const TOKEN = '/api/auth/federation/token';
  const FLOW_KEY = 'keygate.federation';
  const IDENTITY = {
    id: '6a1f0c1e-8a3b-4b8e-9c55-2f0d7d1c9e40',
    provider: 'google',
    subject: '110169484474386276334',
    email: 'alice@gmail.com',
    linkedAt: '2026-01-01T00:00:00.000Z',
    lastUsedAt: null,
  };

  let clock: FakeClock;
  let keygate: FakeKeygate;
  /** This tab's sessionStorage, address bar and history, as a browser keeps them. */
  let tab: Map<string, string>;
  let address: string;
  let replaced: string[];
  let navigated: string[];

  function setGlobal(name: string, value: unknown): void {
    Object.defineProperty(globalThis, name, { configurable: true, writable: true, value });
  }

  beforeEach(() => {
    clock = new FakeClock();
    keygate = new FakeKeygate(clock);
    keygate.always.set('POST /api/auth/federation/token', () => json(200, keygate.pair()));
    tab = new Map();
    address = FRONT_END;
    replaced = [];
    navigated = [];
    setGlobal('sessionStorage', {
      getItem: (key: string) => tab.get(key) ?? null,
      setItem: (key: string, value: string) => void tab.set(key, value),
      removeItem: (key: string) => void tab.delete(key),
    });
    setGlobal('location', {
      get href() {
        return address;
      },
    });
    setGlobal('history', {
      state: { page: 1 },
      replaceState(state: unknown, _unused: string, url: string) {
        expect(state).toEqual({ page: 1 });
        replaced.push(url);
        address = url;
      },
    });
  });

  afterEach(() => {
    for (const name of ['sessionStorage', 'location', 'history', 'navigator']) {
      delete (globalThis as Record<string, unknown>)[name];
    }
  });

  function client() {
    return createKeygateClient({
      baseUrl: `${BASE_URL}/`,
      fetch: keygate.fetch,
      navigate: (url) => navigated.push(url),
      testOnly: { clock, random: () => 0.5 },
    });
  }

  function sha256(text: string): string {
    return createHash('sha256').update(text).digest('base64url');
  }

  function storedFlow(): { provider: string; codeVerifier: string; code?: string } | undefined {
    const text = tab.get(FLOW_KEY);
    return text === undefined
      ? undefined
      : (JSON.parse(text) as { provider: string; codeVerifier: string; code?: string });
  }

  /** A flow started by signInWith() in this tab and come back with `query`. */
  async function returnedWith(query: string) {
    const keygateClient = client();
    await keygateClient.signInWith('google', { redirectTo: FRONT_END });
    address = `${FRONT_END}?${query}`;
    return keygateClient;
  }

  it("should send the browser to Keygate's authorize route with an S256 challenge of the verifier kept in this tab", async () => {
    await client().signInWith('google', { redirectTo: FRONT_END });

    const flow = storedFlow();
    expect(flow).toEqual({ provider: 'google', codeVerifier: expect.any(String) });
    expect(flow?.codeVerifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(navigated).toEqual([
      `${BASE_URL}/api/auth/federation/google/authorize?redirectTo=${encodeURIComponent(FRONT_END)}&codeChallenge=${sha256(flow?.codeVerifier ?? '')}`,
    ]);
    // The browser goes there itself: Keygate is not called, and the verifier never leaves the tab.
    expect(keygate.calls).toEqual([]);
    expect(navigated[0]).not.toContain(flow?.codeVerifier);

    // Each flow has a verifier of its own.
    await client().signInWith('github', { redirectTo: FRONT_END });
    expect(storedFlow()?.codeVerifier).not.toBe(flow?.codeVerifier);
    expect(navigated[1]).toContain('/api/auth/federation/github/authorize?');
  });

  it('should exchange the code with the verifier, keep the session as login does, and clear the address bar', async () => {
    const keygateClient = await returnedWith('code=one-time-code&tab=2');
    const verifier = storedFlow()?.codeVerifier;
    address = `${FRONT_END}?code=one-time-code&tab=2#top`;
    const changes: SessionState[] = [];
    keygateClient.onChange((state) => changes.push(state));

    const result = await keygateClient.completeSignIn();

    expect(keygate.calls).toEqual([
      {
        method: 'POST',
        path: TOKEN,
        body: { code: 'one-time-code', codeVerifier: verifier },
        authorization: null,
      },
    ]);
    expect(result).toEqual({
      status: 'signed-in',
      response: {
        accessToken: expect.any(String),
        refreshToken: 'refresh-1',
        accessTokenExpiry: '2026-01-01T00:15:00.000Z',
        user: USER,
      },
    });
    expect(replaced).toEqual([`${FRONT_END}?tab=2#top`]);
    expect(changes).toEqual([{ user: USER, accessTokenExpiry: '2026-01-01T00:15:00.000Z' }]);
    expect(await keygateClient.getAccessToken()).toBe(
      result.status === 'signed-in' ? result.response.accessToken : null,
    );
    expect(storedFlow()).toBeUndefined();
    // Done: a second call finds nothing to complete.
    expect(await keygateClient.completeSignIn()).toEqual({ status: 'none' });
    expect(keygate.count(TOKEN)).toBe(1);
  });

  it('should say a second factor is needed, and take its code on the next call, as login() takes code', async () => {
    const keygateClient = await returnedWith('code=one-time-code');
    const verifier = storedFlow()?.codeVerifier;
    keygate.once.set('POST /api/auth/federation/token', () =>
      refused(401, 'Se requiere el código de verificación.'),
    );

    expect(await keygateClient.completeSignIn()).toEqual({ status: 'second-factor-required' });
    // Out of the address bar at once; kept in the tab (a reload asks again) until it is used.
    expect(replaced).toEqual([FRONT_END]);
    expect(storedFlow()).toEqual({
      provider: 'google',
      codeVerifier: verifier,
      code: 'one-time-code',
    });

    // A wrong code is thrown as Keygate said it, and the code stays for another try.
    keygate.once.set('POST /api/auth/federation/token', () =>
      refused(401, 'Código de verificación inválido.'),
    );
    const wrong = await keygateClient
      .completeSignIn({ secondFactorCode: '000000' })
      .catch((error: unknown) => error);
    expect(wrong).toBeInstanceOf(KeygateError);
    expect(wrong).toMatchObject({ status: 401, message: 'Código de verificación inválido.' });
    expect(storedFlow()?.code).toBe('one-time-code');

    const result = await keygateClient.completeSignIn({ secondFactorCode: '123456' });

    expect(result.status).toBe('signed-in');
    expect(keygate.calls.map(({ body }) => body)).toEqual([
      { code: 'one-time-code', codeVerifier: verifier },
      { code: 'one-time-code', codeVerifier: verifier, secondFactorCode: '000000' },
      { code: 'one-time-code', codeVerifier: verifier, secondFactorCode: '123456' },
    ]);
    expect(storedFlow()).toBeUndefined();
    expect(await keygateClient.getAccessToken()).not.toBeNull();
  });

  it('should ask for the second factor again after a reload, with the code it kept, until the code is used', async () => {
    await returnedWith('code=one-time-code');
    keygate.always.set('POST /api/auth/federation/token', () =>
      refused(401, 'Se requiere el código de verificación.'),
    );
    expect(await client().completeSignIn()).toEqual({ status: 'second-factor-required' });

    // The page reloads (a new client, the address bar already clean): the tab still holds the code.
    const reloaded = client();
    expect(await reloaded.completeSignIn()).toEqual({ status: 'second-factor-required' });
    keygate.always.set('POST /api/auth/federation/token', () => json(200, keygate.pair()));
    expect((await reloaded.completeSignIn({ secondFactorCode: '123456' })).status).toBe(
      'signed-in',
    );
    expect(keygate.calls.map(({ body }) => body.code)).toEqual([
      'one-time-code',
      'one-time-code',
      'one-time-code',
    ]);
    expect(replaced).toEqual([FRONT_END]);
  });

  it('should refuse to start a flow without WebCrypto, before keeping or sending anything', async () => {
    const crypto = Object.getOwnPropertyDescriptor(globalThis, 'crypto');
    setGlobal('crypto', {});
    try {
      const error = await client()
        .signInWith('google', { redirectTo: FRONT_END })
        .catch((failure: unknown) => failure);

      expect(error).toBeInstanceOf(DOMException);
      expect(error).toMatchObject({ name: 'NotSupportedError' });
    } finally {
      Object.defineProperty(globalThis, 'crypto', crypto!);
    }
    expect(navigated).toEqual([]);
    expect(storedFlow()).toBeUndefined();
  });

  it('should answer the second factor with a passkey when Keygate asks for it, and only then', async () => {
    const assertion = { id: 'cred', type: 'public-key', response: { signed: 'by toJSON' } };
    const asked: unknown[] = [];
    setGlobal('navigator', {
      credentials: {
        get: (options: unknown) => {
          asked.push(options);
          return Promise.resolve({ toJSON: () => assertion });
        },
      },
    });
    keygate.always.set('POST /api/auth/passkeys/login/options', () =>
      json(200, { challenge: 'BQYH', rpId: 'example.com' }),
    );
    const keygateClient = await returnedWith('code=one-time-code');
    const verifier = storedFlow()?.codeVerifier;
    keygate.once.set('POST /api/auth/federation/token', () =>
      refused(401, 'Se requiere el código de verificación.'),
    );

    const result = await keygateClient.completeSignIn({ passkey: true });

    expect(result.status).toBe('signed-in');
    expect(keygate.calls.map(({ path, body }) => ({ path, body }))).toEqual([
      { path: TOKEN, body: { code: 'one-time-code', codeVerifier: verifier } },
      { path: '/api/auth/passkeys/login/options', body: {} },
      { path: TOKEN, body: { code: 'one-time-code', codeVerifier: verifier, passkey: assertion } },
    ]);
    expect(asked).toHaveLength(1);
  });

  it.each([
    ['access_denied', 'error=access_denied', { status: 'error', error: 'access_denied' }],
    [
      'account_not_linked',
      'error=account_not_linked&tab=2',
      { status: 'error', error: 'account_not_linked' },
    ],
    ['linked', 'linked=google&tab=2', { status: 'linked', provider: 'google' }],
  ])(
    'should give the return %s as it came, send nothing, and forget the flow',
    async (_name, query, expected) => {
      const keygateClient = await returnedWith(query);

      expect(await keygateClient.completeSignIn()).toEqual(expected);
      expect(keygate.calls).toEqual([]);
      expect(replaced).toEqual([query.endsWith('&tab=2') ? `${FRONT_END}?tab=2` : FRONT_END]);
      expect(storedFlow()).toBeUndefined();
    },
  );

  it('should find nothing to complete on a page the flow did not return to, and leave its address alone', async () => {
    address = `${FRONT_END}?tab=2`;

    expect(await client().completeSignIn()).toEqual({ status: 'none' });
    expect(replaced).toEqual([]);
    expect(keygate.calls).toEqual([]);
  });

  it('should not send a code this tab holds no verifier for', async () => {
    address = `${FRONT_END}?code=someone-elses-code`;

    expect(await client().completeSignIn()).toEqual({ status: 'error', error: 'flow_not_found' });
    expect(keygate.calls).toEqual([]);
    expect(replaced).toEqual([FRONT_END]);
  });

  it("should throw Keygate's refusal of the code unchanged and forget the flow", async () => {
    const keygateClient = await returnedWith('code=expired-code');
    keygate.once.set('POST /api/auth/federation/token', () =>
      refused(401, 'Código de inicio de sesión inválido o expirado.'),
    );

    const error = await keygateClient.completeSignIn().catch((failure: unknown) => failure);

    expect(error).toBeInstanceOf(KeygateError);
    expect(error).toMatchObject({
      status: 401,
      message: 'Código de inicio de sesión inválido o expirado.',
      body: {
        status: 401,
        message: 'Código de inicio de sesión inválido o expirado.',
        timestamp: '2026-01-01T00:00:00.000Z',
      },
    });
    expect(storedFlow()).toBeUndefined();
    expect(await keygateClient.getAccessToken()).toBeNull();
    expect(await keygateClient.completeSignIn()).toEqual({ status: 'none' });
  });

  it('should list the providers without a session', async () => {
    const providers = { providers: [{ id: 'google', name: 'Google' }] };
    keygate.once.set('GET /api/auth/federation/providers', () => json(200, providers));

    expect(await client().providers()).toEqual(providers);
    expect(keygate.calls).toEqual([
      { method: 'GET', path: '/api/auth/federation/providers', body: {}, authorization: null },
    ]);
  });

  it('should list and unlink identities with the bearer, throwing the refusal to unlink the last way in', async () => {
    const keygateClient = client();
    await keygateClient.login({ email: 'alice@example.com', password: 'S3cure!pass' });
    const bearer = `Bearer ${await keygateClient.getAccessToken()}`;
    keygate.once.set('GET /api/auth/identities', () => json(200, { identities: [IDENTITY] }));
    keygate.once.set(
      `DELETE /api/auth/identities/${IDENTITY.id}`,
      () => new Response(null, { status: 204 }),
    );

    expect(await keygateClient.identities()).toEqual({ identities: [IDENTITY] });
    expect(await keygateClient.unlinkIdentity(IDENTITY.id)).toBeUndefined();
    keygate.once.set(`DELETE /api/auth/identities/${IDENTITY.id}`, () =>
      refused(409, 'No puedes quitar la única forma de iniciar sesión de la cuenta.'),
    );
    await expect(keygateClient.unlinkIdentity(IDENTITY.id)).rejects.toMatchObject({
      status: 409,
      message: 'No puedes quitar la única forma de iniciar sesión de la cuenta.',
    });
    expect(
      keygate.calls
        .slice(1)
        .map(({ method, path, authorization }) => ({ method, path, authorization })),
    ).toEqual([
      { method: 'GET', path: '/api/auth/identities', authorization: bearer },
      { method: 'DELETE', path: `/api/auth/identities/${IDENTITY.id}`, authorization: bearer },
      { method: 'DELETE', path: `/api/auth/identities/${IDENTITY.id}`, authorization: bearer },
    ]);
  });

  it('should link a provider: the link route with the password and a challenge, then the provider', async () => {
    const keygateClient = client();
    await keygateClient.login({ email: 'alice@example.com', password: 'S3cure!pass' });
    const authorizeUrl = 'https://accounts.example.com/authorize?state=s';
    keygate.once.set('POST /api/auth/federation/google/link', () => json(200, { authorizeUrl }));

    await keygateClient.linkProvider('google', { redirectTo: FRONT_END, password: 'S3cure!pass' });

    const flow = storedFlow();
    expect(keygate.calls.at(-1)).toEqual({
      method: 'POST',
      path: '/api/auth/federation/google/link',
      body: {
        redirectTo: FRONT_END,
        codeChallenge: sha256(flow?.codeVerifier ?? ''),
        password: 'S3cure!pass',
      },
      authorization: `Bearer ${await keygateClient.getAccessToken()}`,
    });
    expect(navigated).toEqual([authorizeUrl]);
  });

  it('should throw a wrong password at linking unchanged, without a refresh, a flow or a navigation', async () => {
    const keygateClient = client();
    await keygateClient.login({ email: 'alice@example.com', password: 'S3cure!pass' });
    keygate.once.set('POST /api/auth/federation/google/link', () =>
      refused(401, 'Credenciales inválidas.'),
    );

    await expect(
      keygateClient.linkProvider('google', { redirectTo: FRONT_END, password: 'wrong' }),
    ).rejects.toMatchObject({ status: 401, message: 'Credenciales inválidas.' });
    expect(keygate.count('/api/auth/refresh')).toBe(0);
    expect(storedFlow()).toBeUndefined();
    expect(navigated).toEqual([]);
  });
});
