import { mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { ManagementServer } from '../src/metrics/management-server.js';
import { User } from '../src/users/entities/user.entity.js';
import { registerUser } from './factories/user.factory.js';
import {
  createTestApp,
  TEST_HASH_ITERATIONS,
  TEST_SECRET_KEY,
  type TestApp,
  useTestApp,
} from './utils/create-test-app.js';
import { errorBody } from './utils/expected-bodies.js';
import { httpRequest, type TestResponse } from './utils/http.js';
import { Exposition } from './utils/prometheus-text.js';
import {
  canConnect,
  findFreePort,
  spawnServer,
  startServer,
  stopAllServers,
  waitForExit,
  type ServerProcess,
} from './utils/spawn-server.js';
import { HEALTH_LIVE, LOGIN, ME, REFRESH, REGISTER, REVOKE } from './utils/routes.js';
import { createTestDatabase, type TestDatabase } from './utils/test-database.js';

const WRONG_PASSWORD = 'Wrong!pass1';
const DAY_MS = 24 * 60 * 60 * 1000;
/** A spawned server's start-up, on a busy machine, plus the test itself. */
const SPAWN_TEST_TIMEOUT_MS = 30_000;
const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';
const REQUEST_DURATION = 'keygate_http_request_duration_seconds';
const HASH_DURATION = 'keygate_password_hash_duration_seconds';

interface TokenPair {
  readonly accessToken: string;
  readonly refreshToken: string;
}

function managementUrl(t: TestApp): string {
  const address = t.app.get(ManagementServer).address;
  if (address === null) {
    throw new Error('the management listener is not listening');
  }
  return `http://${address.address}:${address.port}`;
}

async function scrape(t: TestApp): Promise<Exposition> {
  const response = await httpRequest(managementUrl(t), '/metrics');
  expect(response.status).toBe(200);
  return new Exposition(response.text);
}

/** Waits, bounded, until the process has written `text` to its standard output. */
async function outputOf(server: ServerProcess, text: string): Promise<string> {
  for (let attempt = 0; attempt < 100 && !server.stdout().includes(text); attempt += 1) {
    await delay(50);
  }
  expect(server.stdout()).toContain(text);
  return server.stdout();
}

function tokensOf(response: TestResponse): TokenPair {
  expect(response.status).toBe(200);
  return response.json<TokenPair & Record<string, unknown>>();
}

describe('metrics', () => {
  const t = useTestApp();

  it('should serve Prometheus text on the loopback management port, apart from the public port', async () => {
    const address = t.app.get(ManagementServer).address;

    expect(address).toEqual(expect.objectContaining({ address: '127.0.0.1' }));
    expect(address?.port).not.toBe(Number(new URL(t.baseUrl).port));
    const response = await httpRequest(managementUrl(t), '/metrics');

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(PROMETHEUS_TEXT);
    for (const [name, type] of [
      ['keygate_registrations_total', 'counter'],
      ['keygate_logins_total', 'counter'],
      ['keygate_lockouts_total', 'counter'],
      ['keygate_refreshes_total', 'counter'],
      ['keygate_descendant_tokens_revoked_total', 'counter'],
      ['keygate_revocations_total', 'counter'],
      ['keygate_all_sessions_revocations_total', 'counter'],
      [REQUEST_DURATION, 'histogram'],
      [HASH_DURATION, 'histogram'],
      ['process_cpu_seconds_total', 'counter'],
      ['process_resident_memory_bytes', 'gauge'],
      ['nodejs_eventloop_lag_seconds', 'gauge'],
    ]) {
      expect(response.text).toContain(`# TYPE ${name} ${type}\n`);
    }
    const exposition = new Exposition(response.text);
    expect(exposition.get('keygate_logins_total', { outcome: 'locked' })).toBe(0);
    expect(exposition.get('keygate_refreshes_total', { outcome: 'deactivated' })).toBe(0);
  });

  it.each(['/metrics', '/api/metrics'])('should not serve %s on the public port', async (path) => {
    const response = await t.get(path);

    expect(response.status).toBe(404);
    expect(response.json()).toEqual(errorBody(404, 'Not Found'));
    expect(response.text).not.toContain('keygate_');
  });

  it('should answer 404 for any other path and 405 for any other method on the management port', async () => {
    const base = managementUrl(t);

    const [other, api, post] = await Promise.all([
      httpRequest(base, '/'),
      httpRequest(base, ME),
      httpRequest(base, '/metrics', { method: 'POST' }),
    ]);

    expect([other.status, api.status, post.status]).toEqual([404, 404, 405]);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('should count each outcome of a scripted session exactly, from the auth events', async () => {
    // The dummy hash that unknown e-mails are verified against is made in the background at
    // start-up; an unknown e-mail waits for it, so it is not counted below.
    await t.post(LOGIN, { email: 'warm-up@example.com', password: WRONG_PASSWORD });
    const before = await scrape(t);

    const alice = await registerUser(t);
    const bob = await registerUser(t);
    const carol = await registerUser(t);
    const dave = await registerUser(t);

    // Logins: one success, five wrong passwords (the fifth starts a lockout), one locked out,
    // one unknown e-mail, one deactivated account.
    expect((await t.post(LOGIN, { email: alice.email, password: alice.password })).status).toBe(
      200,
    );
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const wrong = await t.post(LOGIN, { email: alice.email, password: WRONG_PASSWORD });
      expect(wrong.json()).toEqual(errorBody(401, 'Credenciales inválidas.'));
    }
    const locked = await t.post(LOGIN, { email: alice.email, password: alice.password });
    expect(locked.json()).toEqual(
      errorBody(401, 'Cuenta bloqueada temporalmente. Intenta en 16 minuto(s).'),
    );
    const unknown = await t.post(LOGIN, { email: 'nobody@example.com', password: alice.password });
    expect(unknown.json()).toEqual(errorBody(401, 'Credenciales inválidas.'));
    await t.dataSource.getRepository(User).update({ id: bob.id }, { isActive: false });
    const deactivated = await t.post(LOGIN, { email: bob.email, password: bob.password });
    expect(deactivated.json()).toEqual(errorBody(401, 'Cuenta desactivada.'));

    // Refreshes: a deactivated owner, two rotations, a replay of the first token (its live
    // descendant is revoked), an unknown token.
    const refusedOwner = await t.post(REFRESH, { refreshToken: bob.refreshToken });
    expect(refusedOwner.json()).toEqual(errorBody(401, 'Cuenta desactivada.'));
    const carol1 = tokensOf(await t.post(REFRESH, { refreshToken: carol.refreshToken }));
    tokensOf(await t.post(REFRESH, { refreshToken: carol1.refreshToken }));
    const replay = await t.post(REFRESH, { refreshToken: carol.refreshToken });
    expect(replay.json()).toEqual(errorBody(401, 'Refresh token revocado.'));
    const invalid = await t.post(REFRESH, { refreshToken: 'x'.repeat(43) });
    expect(invalid.json()).toEqual(errorBody(401, 'Refresh token inválido.'));

    // Revocations: an active token; a rotated one, whose live descendant goes with it; an
    // unknown one, which is refused and not counted.
    const revoked = await t.post(REVOKE, { refreshToken: dave.refreshToken }, dave.accessToken);
    expect(revoked.status).toBe(200);
    const dave1 = tokensOf(await t.post(LOGIN, { email: dave.email, password: dave.password }));
    const dave2 = tokensOf(await t.post(REFRESH, { refreshToken: dave1.refreshToken }));
    const rotatedRevoked = await t.post(
      REVOKE,
      { refreshToken: dave1.refreshToken },
      dave2.accessToken,
    );
    expect(rotatedRevoked.status).toBe(200);
    const refusedRevoke = await t.post(REVOKE, { refreshToken: 'y'.repeat(43) }, dave2.accessToken);
    expect(refusedRevoke.status).toBe(401);

    // An expired refresh token, last: the clock moves past its lifetime.
    const carol3 = tokensOf(await t.post(LOGIN, { email: carol.email, password: carol.password }));
    t.clock.advance(8 * DAY_MS);
    const expired = await t.post(REFRESH, { refreshToken: carol3.refreshToken });
    expect(expired.json()).toEqual(errorBody(401, 'Refresh token expirado.'));

    const after = await scrape(t);
    const delta = (name: string, labels: Record<string, string> = {}): number =>
      after.delta(before, name, labels);
    expect({
      registrations: delta('keygate_registrations_total'),
      logins: Object.fromEntries(
        ['success', 'bad_credentials', 'locked', 'deactivated'].map((outcome) => [
          outcome,
          delta('keygate_logins_total', { outcome }),
        ]),
      ),
      lockouts: delta('keygate_lockouts_total'),
      refreshes: Object.fromEntries(
        ['rotated', 'reuse_detected', 'expired', 'invalid', 'deactivated'].map((outcome) => [
          outcome,
          delta('keygate_refreshes_total', { outcome }),
        ]),
      ),
      descendantsRevoked: {
        reuse_detected: delta('keygate_descendant_tokens_revoked_total', {
          cause: 'reuse_detected',
        }),
        revoke: delta('keygate_descendant_tokens_revoked_total', { cause: 'revoke' }),
      },
      revocations: delta('keygate_revocations_total'),
      allSessionsRevocations: delta('keygate_all_sessions_revocations_total'),
      hashes: delta(`${HASH_DURATION}_count`, { operation: 'hash' }),
      verifications: delta(`${HASH_DURATION}_count`, { operation: 'verify' }),
    }).toEqual({
      registrations: 4,
      logins: { success: 3, bad_credentials: 6, locked: 1, deactivated: 1 },
      lockouts: 1,
      refreshes: { rotated: 3, reuse_detected: 1, expired: 1, invalid: 1, deactivated: 1 },
      descendantsRevoked: { reuse_detected: 1, revoke: 1 },
      revocations: 2,
      allSessionsRevocations: 0,
      // One per registration; a verification per login that reached the password check (three
      // successes, five wrong passwords, the unknown e-mail's dummy).
      hashes: 4,
      verifications: 9,
    });
    expect(delta(`${HASH_DURATION}_sum`, { operation: 'verify' })).toBeGreaterThan(0);

    for (const secret of [alice, bob, carol, dave].flatMap((user) => [
      user.email,
      user.id,
      user.refreshToken,
      user.accessToken,
    ])) {
      expect(after.text).not.toContain(secret);
    }
  });

  it('should time requests by method, route pattern and status code, with one label for unmatched routes', async () => {
    const user = await registerUser(t);
    const before = await scrape(t);

    await t.post(LOGIN, { email: user.email, password: user.password });
    await t.post(LOGIN, { email: user.email, password: WRONG_PASSWORD });
    await t.post(LOGIN, { email: user.email, password: WRONG_PASSWORD });
    await t.get(ME, user.accessToken);
    await t.get(ME);
    await t.get(HEALTH_LIVE);
    await t.get(`/api/auth/me/${user.id}?email=${encodeURIComponent(user.email)}`);
    await t.get('/wp-login.php');
    await t.post(REGISTER, { username: 'x' });

    const after = await scrape(t);
    const count = (method: string, route: string, status_code: string): number =>
      after.delta(before, `${REQUEST_DURATION}_count`, { method, route, status_code });
    expect([
      count('POST', LOGIN, '200'),
      count('POST', LOGIN, '401'),
      count('GET', ME, '200'),
      count('GET', ME, '401'),
      count('GET', HEALTH_LIVE, '200'),
      count('GET', 'unmatched', '404'),
      count('POST', REGISTER, '400'),
    ]).toEqual([1, 2, 1, 1, 1, 2, 1]);
    expect(
      after.delta(before, `${REQUEST_DURATION}_sum`, {
        method: 'POST',
        route: LOGIN,
        status_code: '200',
      }),
    ).toBeGreaterThan(0);
    expect(
      after.delta(before, `${REQUEST_DURATION}_bucket`, {
        method: 'POST',
        route: LOGIN,
        status_code: '401',
        le: '+Inf',
      }),
    ).toBe(2);
    const routes = new Set(after.labelSets(`${REQUEST_DURATION}_count`).map((l) => l.route));
    expect([...routes].sort()).toEqual([LOGIN, ME, REGISTER, HEALTH_LIVE, 'unmatched'].sort());
  });

  it('should stop listening when the app closes', async () => {
    const other = await createTestApp();
    const { port } = other.app.get(ManagementServer).address ?? { port: 0 };
    expect(await canConnect(port)).toBe(true);

    await other.close();

    expect(await canConnect(port)).toBe(false);
    expect(other.app.get(ManagementServer).address).toBeNull();
  });
});

describe('metrics with Management__Enabled=false', () => {
  it('should open no management listener', async () => {
    const t = await createTestApp({ environment: { Management__Enabled: 'false' } });
    try {
      expect(t.app.get(ManagementServer).address).toBeNull();
      expect((await t.get('/metrics')).status).toBe(404);
    } finally {
      await t.close();
    }
  });
});

describe('metrics: the built server', () => {
  let database: TestDatabase;
  let cwd: string;

  beforeEach(async () => {
    database = await createTestDatabase();
    cwd = mkdtempSync(join(tmpdir(), 'keygate-metrics-'));
  });

  afterEach(async () => {
    await stopAllServers();
    await database.drop();
    rmSync(cwd, { recursive: true, force: true });
  });

  async function start(management: Record<string, string>): Promise<ServerProcess> {
    return startServer({
      cwd,
      env: {
        Jwt__SecretKey: TEST_SECRET_KEY,
        PasswordHashing__Iterations: String(TEST_HASH_ITERATIONS),
        ConnectionStrings__DefaultConnection: database.connectionString,
        ...management,
      },
    });
  }

  it(
    'should serve /metrics on Management__Port once the app listens, and not on PORT',
    async () => {
      const managementPort = await findFreePort();
      const server = await start({ Management__Port: String(managementPort) });
      const output = await outputOf(
        server,
        `Metrics at http://127.0.0.1:${managementPort}/metrics`,
      );

      expect(output.indexOf('Metrics at')).toBeGreaterThan(
        output.indexOf('Nest application successfully started'),
      );
      const metrics = await httpRequest(`http://127.0.0.1:${managementPort}`, '/metrics');
      const publicMetrics = await httpRequest(server.baseUrl, '/metrics');

      expect(metrics.status).toBe(200);
      expect(metrics.text).toContain('# TYPE keygate_logins_total counter');
      expect(publicMetrics.status).toBe(404);
      expect((await server.stop()).code).toBe(0);
    },
    SPAWN_TEST_TIMEOUT_MS,
  );

  it(
    'should refuse to start when the management port is taken',
    async () => {
      const squatter = createServer().listen(0, '127.0.0.1');
      await once(squatter, 'listening');
      const { port } = squatter.address() as AddressInfo;
      try {
        const server = await spawnServer({
          cwd,
          env: {
            Jwt__SecretKey: TEST_SECRET_KEY,
            PasswordHashing__Iterations: String(TEST_HASH_ITERATIONS),
            ConnectionStrings__DefaultConnection: database.connectionString,
            Management__Port: String(port),
          },
        });

        const exit = await waitForExit(server, SPAWN_TEST_TIMEOUT_MS / 2);

        expect(exit.code).toBe(1);
        expect(server.stderr()).toContain(
          `Keygate failed to start: Management__Port: cannot listen on 127.0.0.1:${port}`,
        );
      } finally {
        squatter.close();
      }
    },
    SPAWN_TEST_TIMEOUT_MS,
  );

  it(
    'should listen on nothing but PORT with Management__Enabled=false',
    async () => {
      const managementPort = await findFreePort();
      const server = await start({
        Management__Enabled: 'false',
        Management__Port: String(managementPort),
      });

      const output = await outputOf(server, 'Management listener off');

      expect((await httpRequest(server.baseUrl, HEALTH_LIVE)).status).toBe(200);
      expect(await canConnect(managementPort)).toBe(false);
      expect(output).not.toContain('Metrics at');
    },
    SPAWN_TEST_TIMEOUT_MS,
  );
});
