import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { runCliOn } from '../utils/cli-process.js';
import { TEST_HASH_ITERATIONS, TEST_SECRET_KEY } from '../utils/create-test-app.js';
import { decodeJwt } from '../utils/jwt.js';
import { LOGIN, REFRESH, REGISTER } from '../utils/routes.js';
import { startServer, stopAllServers, type ServerProcess } from '../utils/spawn-server.js';
import { createTestDatabase, onPostgres, type TestDatabase } from '../utils/test-database.js';
import { WebhookReceiver } from '../utils/webhook-receiver.js';

const PASSWORD = 'S3cure!pass';
/** Two instances share the database on PostgreSQL; one process owns the SQLite file. */
const INSTANCES = onPostgres ? 2 : 1;

const ENVIRONMENT = {
  PasswordHashing__Iterations: String(TEST_HASH_ITERATIONS),
  Webhooks__EncryptionKeys: Buffer.alloc(32, 9).toString('base64'),
  Webhooks__AllowPrivateDestinations: 'true',
  Webhooks__RetryDelaySeconds: '1',
  Webhooks__MaxRetryDelaySeconds: '1',
  Webhooks__ConnectTimeoutSeconds: '1',
  Webhooks__TimeoutSeconds: '1',
  Webhooks__PollIntervalSeconds: '1',
  Webhooks__MaxAttempts: '4',
};

/** The changes the clients saw acknowledged: one key per event a receiver must get. */
type Ledger = Set<string>;

const keyOf = (type: string, sessionId: string | null) => `${type}:${sessionId}`;
const sidOf = (accessToken: string) => String(decodeJwt(accessToken).payload.sid);

async function post(server: ServerProcess, path: string, body: unknown): Promise<Response | null> {
  try {
    return await fetch(`${server.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  } catch {
    // The process was killed under this request: it was never acknowledged.
    cutOff += 1;
    return null;
  }
}

let cutOff = 0;

/** Registers, logs in and refreshes once, over and over, noting what was acknowledged. */
async function work(servers: () => ServerProcess[], ledger: Ledger, stop: { now: boolean }) {
  let step = 0;
  while (!stop.now) {
    step += 1;
    const list = servers();
    const server = list[step % list.length];
    const email = `w-${step}-${Math.random().toString(36).slice(2)}@example.com`;
    const registered = await post(server, REGISTER, { username: 'w', email, password: PASSWORD });
    if (registered?.status !== 201) {
      continue;
    }
    ledger.add(
      keyOf(
        'registered',
        sidOf(((await registered.json()) as { accessToken: string }).accessToken),
      ),
    );
    const login = await post(server, LOGIN, { email, password: PASSWORD });
    if (login?.status !== 200) {
      continue;
    }
    const tokens = (await login.json()) as { accessToken: string; refreshToken: string };
    ledger.add(keyOf('login_succeeded', sidOf(tokens.accessToken)));
    const refreshed = await post(server, REFRESH, { refreshToken: tokens.refreshToken });
    if (refreshed?.status === 200) {
      ledger.add(keyOf('token_refreshed', sidOf(tokens.accessToken)));
    }
  }
}

describe('webhooks through receiver outages, 5xx answers, timeouts, kill -9 and a replay', () => {
  let directory: string;
  let database: TestDatabase;

  beforeEach(async () => {
    directory = mkdtempSync(join(tmpdir(), 'keygate-webhooks-'));
    database = await createTestDatabase();
  });

  afterEach(async () => {
    await stopAllServers();
    await database.drop();
    rmSync(directory, { recursive: true, force: true });
  });

  it('should deliver every acknowledged change exactly once after de-duplication, and nothing else', async () => {
    const env = {
      ...ENVIRONMENT,
      Jwt__SecretKey: TEST_SECRET_KEY,
      ConnectionStrings__DefaultConnection: database.connectionString,
    };
    let servers: ServerProcess[] = [];
    for (let i = 0; i < INSTANCES; i += 1) {
      servers.push(await startServer({ env, cwd: directory }));
    }
    const receiver = await WebhookReceiver.start();
    const added = await runCliOn(
      database,
      [
        'webhooks:add',
        '--url',
        receiver.url,
        '--events',
        'registered,login_succeeded,token_refreshed',
      ],
      directory,
      env,
    );
    expect(added.code).toBe(0);
    const secret = /^secret: (whsec_\S+)$/m.exec(added.stdout)?.[1];
    expect(secret).toBeDefined();
    receiver.trust(String(secret));

    const ledger: Ledger = new Set();
    const stop = { now: false };
    const workers = Array.from({ length: 4 }, () => work(() => servers, ledger, stop));
    const phase = (ms: number) => delay(ms);

    // Served, then answered 503, then never answered (the attempt's deadline), then refused.
    await phase(1_500);
    receiver.mode = { kind: 'status', status: 503 };
    await phase(1_500);
    receiver.mode = { kind: 'hang' };
    await phase(800);
    // kill -9 of an instance with deliveries in flight (the receiver holds them), and a restart.
    servers[0].child.kill('SIGKILL');
    await servers[0].exited;
    servers = [...servers.slice(1), await startServer({ env, cwd: directory })];
    await receiver.stop();
    // Down long enough that some deliveries run out of attempts (4, a second apart): dead.
    await phase(6_000);
    await receiver.listen();
    receiver.mode = { kind: 'accept' };
    stop.now = true;
    await Promise.all(workers);

    const dead = await runCliOn(database, ['webhooks:dead'], directory, env);
    expect(dead.code).toBe(0);
    expect(dead.stdout).not.toBe('No dead webhook deliveries.\n');
    const replayed = await runCliOn(database, ['webhooks:replay', 'all'], directory, env);
    expect(replayed.code).toBe(0);
    expect(replayed.stdout).toMatch(/^Replayed [1-9]\d* dead webhook delivery\(ies\)/);

    // Everything acknowledged arrives; waited for, bounded.
    const delivered = () =>
      new Set(receiver.unique().map((w) => keyOf(w.payload.type, w.payload.data.sessionId)));
    for (
      let waited = 0;
      waited < 60_000 && [...ledger].some((key) => !delivered().has(key));
      waited += 250
    ) {
      await delay(250);
    }
    // And a little longer, so that a duplicate or a stray would have time to show.
    await delay(2_500);

    expect(ledger.size).toBeGreaterThan(20);
    expect(receiver.rejected).toEqual([]);
    expect([...ledger].filter((key) => !delivered().has(key))).toEqual([]);
    // Exactly once after de-duplication: one webhook-id per event, one event per webhook-id.
    const unique = receiver.unique();
    expect(new Set(unique.map((w) => w.payload.data.eventId)).size).toBe(unique.length);
    const perChange = new Map<string, number>();
    for (const w of unique) {
      const key = keyOf(w.payload.type, w.payload.data.sessionId);
      perChange.set(key, (perChange.get(key) ?? 0) + 1);
    }
    expect([...perChange].filter(([, count]) => count !== 1)).toEqual([]);
    // Nothing invented: every delivery is of a change a client asked for (acknowledged, or cut
    // off by the kill after it committed).
    expect(unique.length - ledger.size).toBeLessThanOrEqual(cutOff);
    const stray = unique.filter(
      (w) => w.payload.data.accountId === null || w.payload.data.sessionId === null,
    );
    expect(stray).toEqual([]);
    expect(receiver.maxConcurrentPerId).toBe(1);
    await receiver.stop();
  }, 180_000);
});
