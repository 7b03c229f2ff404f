import { cliOrigin } from '../src/admin/cli/cli-origin.js';
import { AuditTrail } from '../src/audit/audit-trail.service.js';
import { RandomSource } from '../src/common/random/random-source.js';
import { UnitOfWork } from '../src/database/unit-of-work.js';
import { AuthEvents } from '../src/events/auth-events.js';
import { RequestActivity } from '../src/http/request-activity.js';
import { jest } from '@jest/globals';
import pg from 'pg';
import { WebhookDelivery } from '../src/webhooks/entities/webhook-delivery.entity.js';
import {
  WEBHOOK_CLAIM_LOCK,
  WebhookDeliveryRepository,
} from '../src/webhooks/webhook-delivery.repository.js';
import { WebhookSender } from '../src/webhooks/webhook-sender.js';
import { WebhooksService } from '../src/webhooks/webhooks.service.js';
import { registerUser } from './factories/user.factory.js';
import { createTestApp, useTestApp, type TestApp } from './utils/create-test-app.js';
import { FakeClock } from './utils/fake-clock.js';
import { decodeJwt } from './utils/jwt.js';
import { LOGIN, REFRESH, REGISTER, REVOKE } from './utils/routes.js';
import { describeOnPostgres } from './utils/test-database.js';
import { WebhookReceiver, type ReceivedWebhook } from './utils/webhook-receiver.js';

/** A key for Webhooks__EncryptionKeys: the base64 of 32 bytes. */
const WEBHOOK_KEY = Buffer.alloc(32, 7).toString('base64');

const ENVIRONMENT = {
  Webhooks__EncryptionKeys: WEBHOOK_KEY,
  // The receiver listens on loopback.
  Webhooks__AllowPrivateDestinations: 'true',
  Webhooks__RetryDelaySeconds: '1',
  Webhooks__MaxRetryDelaySeconds: '4',
  Webhooks__ConnectTimeoutSeconds: '1',
  Webhooks__TimeoutSeconds: '1',
  Webhooks__MaxAttempts: '6',
};

/** The clock starts at the real now: the receiver's library refuses timestamps 5 minutes off. */
const options = () => ({ environment: ENVIRONMENT, clock: new FakeClock(new Date()) });

/** Subscribes `receiver` to `events` and gives it the secret, as an operator would. */
async function subscribe(t: TestApp, receiver: WebhookReceiver, events = 'all') {
  const added = await t.app
    .get(WebhooksService)
    .add({ url: receiver.url, events }, cliOrigin(t.app.get(RandomSource)));
  receiver.trust(added.secret);
  return added;
}

/** Runs delivery rounds until nothing is due now. */
async function deliver(t: TestApp): Promise<void> {
  const sender = t.app.get(WebhookSender);
  await sender.idle();
  sender.wake();
  await sender.idle();
}

/** Moves the clock past the longest retry delay and delivers what came due. */
async function retry(t: TestApp): Promise<void> {
  t.clock.advance(4_000);
  await deliver(t);
}

/**
 * Waits until a backend waits for a lock that `client` holds (a claim's turn), or `claiming`
 * settled without waiting. Only `client`'s waiters count: the other Jest worker's schemas share
 * this database and its advisory locks.
 */
async function untilWaitingOrSettled(client: pg.Client, claiming: Promise<unknown>): Promise<void> {
  let settled = false;
  void claiming.finally(() => (settled = true));
  for (let tries = 0; tries < 200 && !settled; tries++) {
    const { rows } = await client.query<{ waiting: number }>(
      'SELECT count(*)::int AS "waiting" FROM pg_stat_activity ' +
        'WHERE pg_backend_pid() = ANY (pg_blocking_pids("pid"))',
    );
    if (rows[0].waiting > 0) {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const deliveries = (t: TestApp) => t.dataSource.getRepository(WebhookDelivery);
const types = (received: readonly ReceivedWebhook[]) => received.map((w) => w.payload.type);

describe('Webhooks (e2e)', () => {
  const t = useTestApp(options);
  let receiver: WebhookReceiver;

  beforeEach(async () => {
    receiver = await WebhookReceiver.start();
  });

  afterEach(async () => {
    await receiver.stop();
  });

  it('should deliver every event of a registration, login, refresh and logout, signed per Standard Webhooks, with public facts only', async () => {
    const subscription = await subscribe(t, receiver);
    const user = await registerUser(t);
    const login = await t.post(LOGIN, { email: user.email, password: user.password });
    const loginBody = login.json<{ accessToken: string; refreshToken: string }>();
    const refreshed = await t.post(REFRESH, { refreshToken: loginBody.refreshToken });
    const refreshedBody = refreshed.json<{ accessToken: string; refreshToken: string }>();
    await t.post(REVOKE, { refreshToken: refreshedBody.refreshToken }, refreshedBody.accessToken);
    await deliver(t);

    expect(receiver.rejected).toEqual([]);
    expect(types(receiver.received)).toEqual([
      'admin_webhook_added',
      'registered',
      'login_succeeded',
      'token_refreshed',
      'token_revoked',
    ]);
    const audit = (await t.app.get(AuditTrail).latestForUser(user.id, 10)).reverse();
    const sessionOf = (token: string) => String(decodeJwt(token).payload.sid);
    const sessions = [
      sessionOf(user.accessToken),
      sessionOf(loginBody.accessToken),
      sessionOf(refreshedBody.accessToken),
      sessionOf(refreshedBody.accessToken),
    ];
    receiver.received.slice(1).forEach((webhook, i) => {
      const event = audit[i];
      expect(webhook.id).toBe(`msg_${event.id}_${subscription.id}`);
      // The whole body, as bytes: nothing but the type, the instant and the public facts.
      expect(webhook.body).toBe(
        JSON.stringify({
          type: event.type,
          timestamp: event.occurredAt.toISOString(),
          data: { eventId: event.id, accountId: user.id, sessionId: sessions[i], ip: '127.0.0.1' },
        }),
      );
      expect(Number(webhook.timestamp)).toBe(Math.floor(t.clock.now().getTime() / 1000));
    });
    expect(receiver.received[0].body).toBe(
      JSON.stringify({
        type: 'admin_webhook_added',
        timestamp: receiver.received[0].payload.timestamp,
        data: {
          eventId: receiver.received[0].payload.data.eventId,
          accountId: null,
          sessionId: null,
          ip: 'cli',
        },
      }),
    );
    expect(await deliveries(t).countBy({ state: 'delivered' })).toBe(5);
  });

  it('should count every request the service receives, routed or not, for the pacer that lets requests go first', async () => {
    const activity = t.app.get(RequestActivity);
    const before = activity.requestsStarted();

    await t.post(LOGIN, {});
    await t.post(LOGIN, 'not json');
    await t.get('/no/such/route');

    expect(activity.requestsStarted() - before).toBe(3);
  });

  it('should send nothing for a change that rolled back, or a request that changed nothing', async () => {
    await subscribe(t, receiver);
    const user = await registerUser(t);
    const events = t.app.get(AuthEvents);

    await expect(
      t.app.get(UnitOfWork).transaction(async (m) => {
        await events.record(
          m,
          { type: 'account_deleted', userId: user.id },
          cliOrigin(t.app.get(RandomSource)),
        );
        throw new Error('the change failed after its event was recorded');
      }),
    ).rejects.toThrow('the change failed after its event was recorded');
    // Taken: 409, nothing written.
    expect((await t.post(REGISTER, { ...user, username: 'other' })).status).toBe(409);
    await deliver(t);

    expect(types(receiver.received)).toEqual(['admin_webhook_added', 'registered']);
    expect(await deliveries(t).count()).toBe(2);
  });

  it('should deliver only the types a subscription asked for', async () => {
    await subscribe(t, receiver, 'registered, account_deleted');
    const user = await registerUser(t);
    await t.post(LOGIN, { email: user.email, password: user.password });
    await deliver(t);

    expect(types(receiver.received)).toEqual(['registered']);
    expect(await deliveries(t).count()).toBe(1);
  });

  it('should retry through 5xx answers, a timeout and refused connections, then deliver each event once, in order per account', async () => {
    await subscribe(t, receiver);
    receiver.mode = { kind: 'status', status: 503 };
    const user = await registerUser(t);
    const login = await t.post(LOGIN, { email: user.email, password: user.password });
    await t.post(REFRESH, { refreshToken: login.json<{ refreshToken: string }>().refreshToken });
    await deliver(t);

    // Only the oldest pending event of each account (and the account-less one) is attempted.
    expect(receiver.requests).toBe(2);
    receiver.mode = { kind: 'hang' };
    await retry(t);
    expect(receiver.requests).toBe(4);
    await receiver.stop();
    await retry(t);
    await receiver.listen();
    receiver.mode = { kind: 'accept' };
    for (let round = 0; round < 3 && receiver.unique().length < 4; round += 1) {
      await retry(t);
    }

    expect(receiver.rejected).toEqual([]);
    expect(types(receiver.received)).toEqual([
      'admin_webhook_added',
      'registered',
      'login_succeeded',
      'token_refreshed',
    ]);
    expect(receiver.received).toHaveLength(4);
    const rows = await deliveries(t).find({ order: { eventId: 'ASC' } });
    expect(rows.map((row) => [row.type, row.state, row.attempts])).toEqual([
      ['admin_webhook_added', 'delivered', 4],
      ['registered', 'delivered', 4],
      ['login_succeeded', 'delivered', 1],
      ['token_refreshed', 'delivered', 1],
    ]);
  });

  it('should send a backlog of an account in batches of several of its events, one after the other in recorded order', async () => {
    await subscribe(t, receiver);
    receiver.mode = { kind: 'status', status: 503 };
    const user = await registerUser(t);
    const login = await t.post(LOGIN, { email: user.email, password: user.password });
    let refreshToken = login.json<{ refreshToken: string }>().refreshToken;
    const REFRESHES = 40;
    for (let i = 0; i < REFRESHES; i += 1) {
      const refreshed = await t.post(REFRESH, { refreshToken });
      refreshToken = refreshed.json<{ refreshToken: string }>().refreshToken;
    }
    await deliver(t);
    // The registration failed and waits for its retry; everything after it waits behind it.
    expect(receiver.requests).toBe(2);
    receiver.mode = { kind: 'accept' };
    const claims = jest.spyOn(t.app.get(WebhookDeliveryRepository), 'claimDue');

    await retry(t);

    const ofAccount = receiver.unique().filter((w) => w.payload.data.accountId === user.id);
    expect(ofAccount.map((w) => w.payload.type)).toEqual([
      'registered',
      'login_succeeded',
      ...Array<string>(REFRESHES).fill('token_refreshed'),
    ]);
    const eventIds = ofAccount.map((w) => w.payload.data.eventId);
    expect(eventIds).toEqual([...eventIds].sort());
    expect(receiver.received).toHaveLength(receiver.unique().length);
    // 44 deliveries in batches of 32: two claims that took some, and one that found none left.
    expect(claims).toHaveBeenCalledTimes(3);
    const attempts = await deliveries(t).find({ where: { type: 'token_refreshed' } });
    expect(attempts.map((row) => [row.state, row.attempts])).toEqual(
      Array(REFRESHES).fill(['delivered', 1]),
    );
  });

  it('should delete the queued and the pending deliveries of a removed subscription', async () => {
    // The sender stays out of it: the test claims as the sender would.
    await t.app.get(WebhookSender).onApplicationShutdown();
    const added = await subscribe(t, receiver);
    await registerUser(t);
    const now = t.clock.now();
    const random = t.app.get(RandomSource);
    // A claim moves the queue into the deliveries; a later event stays queued.
    await t.app
      .get(WebhookDeliveryRepository)
      .claimDue({ id: random.uuid(), now, until: new Date(now.getTime() + 30_000) }, 1);
    await registerUser(t);
    const counts = async () => {
      const [{ queued }] = await t.dataSource.query<{ queued: number }[]>(
        'SELECT count(*) AS "queued" FROM "webhook_queue"',
      );
      return { queued: Number(queued), deliveries: await deliveries(t).count() };
    };
    expect(await counts()).toEqual({ queued: 1, deliveries: 2 });

    await t.app.get(WebhooksService).remove(added.id, cliOrigin(random));

    expect(await counts()).toEqual({ queued: 0, deliveries: 0 });
  });

  it('should not follow a redirect', async () => {
    const elsewhere = await WebhookReceiver.start();
    try {
      await subscribe(t, receiver, 'registered');
      receiver.mode = { kind: 'status', status: 307, location: elsewhere.url };
      await registerUser(t);
      await deliver(t);

      expect(elsewhere.requests).toBe(0);
      const [row] = await deliveries(t).find();
      expect([row.state, row.attempts, row.lastError]).toEqual(['pending', 1, 'HTTP 307']);
    } finally {
      await elsewhere.stop();
    }
  });

  it('should make a delivery dead after its last attempt, list it, and replay it with the same webhook-id', async () => {
    const webhooks = t.app.get(WebhooksService);
    const subscription = await subscribe(t, receiver, 'registered');
    receiver.mode = { kind: 'status', status: 500 };
    const user = await registerUser(t);
    await deliver(t);
    for (let attempt = 2; attempt <= 6; attempt += 1) {
      await retry(t);
    }
    const diedAt = t.clock.now();
    // Dead: no seventh attempt, however long one waits.
    await retry(t);

    expect(receiver.requests).toBe(6);
    const dead = await webhooks.dead();
    expect(dead).toEqual([
      {
        id: expect.stringMatching(new RegExp(`^msg_[0-9a-f-]{36}_${subscription.id}$`)) as string,
        subscriptionId: subscription.id,
        eventId: expect.any(String) as string,
        type: 'registered',
        accountId: user.id,
        attempts: 6,
        lastError: 'HTTP 500',
        finishedAt: diedAt,
      },
    ]);

    receiver.mode = { kind: 'accept' };
    await expect(
      webhooks.replay('msg_unknown', cliOrigin(t.app.get(RandomSource))),
    ).rejects.toThrow('Entrega de webhook fallida no encontrada.');
    expect(await webhooks.replay(dead[0].id, cliOrigin(t.app.get(RandomSource)))).toBe(1);
    await deliver(t);

    expect(receiver.unique().map((w) => w.id)).toEqual([dead[0].id]);
    expect(await webhooks.dead()).toEqual([]);
    expect(await webhooks.replay('all', cliOrigin(t.app.get(RandomSource)))).toBe(0);
  });

  it('should make a replayed delivery wait for a later retry of its account, and send them all in recorded order', async () => {
    const webhooks = t.app.get(WebhooksService);
    await subscribe(t, receiver, 'registered,login_succeeded,token_refreshed');
    receiver.mode = { kind: 'status', status: 500 };
    const user = await registerUser(t);
    await deliver(t);
    for (let attempt = 2; attempt <= 6; attempt += 1) {
      await retry(t);
    }
    const [dead] = await webhooks.dead();
    expect(dead.type).toBe('registered');
    // A later event of the account fails once and waits for its retry; one more waits behind it.
    const login = await t.post(LOGIN, { email: user.email, password: user.password });
    await deliver(t);
    await t.post(REFRESH, { refreshToken: login.json<{ refreshToken: string }>().refreshToken });
    await deliver(t);
    const failedBefore = receiver.requests;

    receiver.mode = { kind: 'accept' };
    expect(await webhooks.replay(dead.id, cliOrigin(t.app.get(RandomSource)))).toBe(1);
    await deliver(t);

    // Nothing yet: the replayed one waits for the login's retry, the refresh behind both.
    expect(receiver.requests).toBe(failedBefore);
    await retry(t);
    expect(types(receiver.unique())).toEqual(['registered', 'login_succeeded', 'token_refreshed']);
    expect(receiver.received).toHaveLength(3);
  });
});

describe('Webhook subscriptions (e2e)', () => {
  it('should refuse loopback and private endpoints without Webhooks__AllowPrivateDestinations', async () => {
    const t = await createTestApp({
      environment: { Webhooks__EncryptionKeys: WEBHOOK_KEY },
    });
    try {
      const webhooks = t.app.get(WebhooksService);
      const origin = cliOrigin(t.app.get(RandomSource));
      for (const url of [
        'http://127.0.0.1:8080/hooks',
        'http://localhost/hooks',
        'http://[::1]/hooks',
        'http://[::ffff:10.0.0.1]/hooks',
        'https://169.254.169.254/latest/meta-data',
        'http://192.168.1.10/hooks',
      ]) {
        await expect(webhooks.add({ url, events: 'all' }, origin)).rejects.toThrow(
          'La URL apunta a una dirección privada, de loopback o de enlace local; Webhooks__AllowPrivateDestinations=true la permite.',
        );
      }
      for (const url of [
        'ftp://example.com/x',
        'https://user:pw@example.com/',
        'not a url',
        'https://example.com/#x',
      ]) {
        await expect(webhooks.add({ url, events: 'all' }, origin)).rejects.toThrow(
          'La URL debe ser http o https absoluta, sin usuario, contraseña ni fragmento, de 2048 caracteres como máximo.',
        );
      }
      await expect(
        webhooks.add({ url: 'https://example.com/hooks', events: 'registered,nope' }, origin),
      ).rejects.toThrow('Tipo de evento desconocido: el catálogo está en docs/webhooks.md.');
      const added = await webhooks.add(
        { url: 'https://example.com/hooks', events: 'account_deleted,registered' },
        origin,
      );
      expect(added.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(await webhooks.list()).toEqual([
        {
          id: added.id,
          url: 'https://example.com/hooks',
          events: ['registered', 'account_deleted'],
          isEnabled: true,
          createdAt: added.createdAt,
        },
      ]);
      // Stored sealed: the secret's text is nowhere in the row.
      const stored = await t.dataSource.query<{ secret: string }[]>(
        'SELECT "secret" FROM "webhook_subscriptions"',
      );
      expect(stored[0].secret).toMatch(/^v1\./);
      expect(stored[0].secret).not.toContain(added.secret.slice(6, 20));
      await webhooks.remove(added.id, origin);
      expect(await webhooks.list()).toEqual([]);
      await expect(webhooks.remove(added.id, origin)).rejects.toThrow(
        'Suscripción de webhook no encontrada.',
      );
    } finally {
      await t.close();
    }
  });

  it('should refuse to add a subscription without Webhooks__EncryptionKeys', async () => {
    const t = await createTestApp();
    try {
      await expect(
        t.app
          .get(WebhooksService)
          .add({ url: 'https://example.com/hooks', events: 'all' }, cliOrigin(new RandomSource())),
      ).rejects.toThrow(
        'Webhooks__EncryptionKeys no está configurado: los secretos de las suscripciones no se pueden guardar cifrados.',
      );
    } finally {
      await t.close();
    }
  });
});

describeOnPostgres('Webhooks on PostgreSQL (e2e)', () => {
  const t = useTestApp(options);

  it('should make claims take turns, so no later event of an account goes before an earlier one another instance is claiming', async () => {
    const receiver = await WebhookReceiver.start();
    try {
      // The sender stays out of it: the test claims as a second instance would.
      await t.app.get(WebhookSender).onApplicationShutdown();
      await subscribe(t, receiver);
      const user = await registerUser(t);
      await t.post(LOGIN, { email: user.email, password: user.password });
      const now = t.clock.now();
      const holder = new pg.Client({ connectionString: t.database.connectionString });
      await holder.connect();
      try {
        // Another instance's claim in progress: it holds the turn, has moved the queue into the
        // deliveries and claimed the registration's, not yet committed.
        await holder.query('BEGIN');
        await holder.query('SELECT pg_advisory_xact_lock(hashtext($1))', [WEBHOOK_CLAIM_LOCK]);
        await holder.query(
          'INSERT INTO "webhook_deliveries" ("id", "subscriptionId", "eventId", "type", ' +
            '"accountId", "sessionId", "ip", "occurredAt", "state", "attempts", "nextAttemptAt") ' +
            `SELECT 'msg_' || "eventId" || '_' || "subscriptionId", "subscriptionId", "eventId", ` +
            `"type", "accountId", "sessionId", "ip", "occurredAt", 'pending', 0, "occurredAt" ` +
            'FROM "webhook_queue"',
        );
        await holder.query('DELETE FROM "webhook_queue"');
        await holder.query(
          `UPDATE "webhook_deliveries" SET "claimedBy" = $1, "claimedUntil" = $2, ` +
            `"attempts" = 1 WHERE "type" = 'registered'`,
          [t.app.get(RandomSource).uuid(), new Date(now.getTime() + 30_000)],
        );
        const claiming = t.app
          .get(WebhookDeliveryRepository)
          .claimDue(
            { id: t.app.get(RandomSource).uuid(), now, until: new Date(now.getTime() + 30_000) },
            32,
          );
        await untilWaitingOrSettled(holder, claiming);
        await holder.query('COMMIT');
        const claimed = await claiming;

        expect(claimed.map((d) => d.type)).toEqual(['admin_webhook_added']);
      } finally {
        await holder.end();
      }
      const login = await deliveries(t).findOneByOrFail({ type: 'login_succeeded' });
      expect([login.state, login.attempts, login.claimedBy]).toEqual(['pending', 0, null]);
    } finally {
      await receiver.stop();
    }
  });
});
