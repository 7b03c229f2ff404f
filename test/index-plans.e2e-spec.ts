import Database from 'better-sqlite3';
import pg from 'pg';
import { cliOrigin } from '../src/admin/cli/cli-origin.js';
import { eventIdText } from '../src/audit/event-id.js';
import { RandomSource } from '../src/common/random/random-source.js';
import { randomUUID } from 'node:crypto';
import { AdminKeysService } from '../src/admin/keys/admin-keys.service.js';
import { internalOrigin } from '../src/common/request-origin/request-origin.js';
import { MailSender } from '../src/mail/mail-sender.js';
import { WebhookSender } from '../src/webhooks/webhook-sender.js';
import { WebhooksService } from '../src/webhooks/webhooks.service.js';
import { registerUser } from './factories/user.factory.js';
import { useSharedTestApp, type TestApp, type TestResponse } from './utils/create-test-app.js';
import {
  EMAIL_CHANGE,
  EMAIL_CODE_LOGIN,
  EMAIL_CODE_SEND,
  EMAIL_VERIFY,
  EMAIL_VERIFY_RESEND,
  LOGIN,
  ME,
  PASSWORD_CHANGE,
  PASSWORD_FORGOT,
  PASSWORD_RESET,
  REFRESH,
  REVOKE,
  REVOKE_ALL_SESSIONS,
  SESSIONS,
  PASSKEYS,
  PASSKEY_LOGIN_OPTIONS,
  PASSKEY_LOGIN_VERIFY,
  PASSKEY_REGISTER_OPTIONS,
  PASSKEY_REGISTER_VERIFY,
} from './utils/routes.js';
import { FakeClock } from './utils/fake-clock.js';
import { tokenOf, useSmtpSink } from './utils/smtp-sink.js';
import { SoftwareAuthenticator } from './utils/software-authenticator.js';
import { onPostgres } from './utils/test-database.js';
import { WebhookReceiver } from './utils/webhook-receiver.js';

// Every statement the service issues while serving the request paths (and what its mail sender
// does meanwhile) is captured at the driver, whatever built it (TypeORM or a prepared statement),
// and its plan is checked: no statement may read a whole table. SQLite: EXPLAIN QUERY PLAN shows
// no `SCAN <table>`. PostgreSQL: EXPLAIN with sequential scans priced out (`enable_seqscan =
// off`, as a table of millions of rows would) shows no `Seq Scan`: one remains only where no
// index can serve the statement.

interface Captured {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

interface Recorder {
  start(): void;
  stop(): Captured[];
}

type StatementMethod = (this: { source: string }, ...args: unknown[]) => unknown;

/** Records what every better-sqlite3 statement of this process runs, while started. */
function sqliteRecorder(): Recorder {
  const probe = new Database(':memory:');
  const prototype = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<
    string,
    StatementMethod
  >;
  probe.close();
  const methods = ['run', 'get', 'all', 'iterate'] as const;
  const originals = methods.map((name) => prototype[name]);
  let captured: Captured[] = [];
  return {
    start: () => {
      captured = [];
      methods.forEach((name, i) => {
        const original = originals[i];
        prototype[name] = function (this: { source: string }, ...args: unknown[]): unknown {
          captured.push({ sql: this.source, parameters: args });
          return original.apply(this, args);
        };
      });
    },
    stop: () => {
      methods.forEach((name, i) => {
        prototype[name] = originals[i];
      });
      return captured;
    },
  };
}

type ClientQuery = (this: pg.Client, ...args: unknown[]) => unknown;

/** Records the text and values of every `pg` query of this process, while started. */
function postgresRecorder(): Recorder {
  const prototype = pg.Client.prototype as unknown as { query: ClientQuery };
  const original = prototype.query;
  let captured: Captured[] = [];
  return {
    start: () => {
      captured = [];
      prototype.query = function (this: pg.Client, ...args: unknown[]): unknown {
        const [first, second] = args;
        if (typeof first === 'string') {
          captured.push({ sql: first, parameters: Array.isArray(second) ? second : [] });
        } else if (typeof first === 'object' && first !== null && 'text' in first) {
          const config = first as { text: string; values?: unknown[] };
          captured.push({ sql: config.text, parameters: config.values ?? [] });
        }
        return original.apply(this, args);
      };
    },
    stop: () => {
      prototype.query = original;
      return captured;
    },
  };
}

/** Statements whose plan says something: reads, updates and deletes of the service's tables. */
function isPlanned(sql: string): boolean {
  const text = sql.trim();
  if (!/^(SELECT|UPDATE|DELETE|WITH|INSERT\b[\s\S]*\bSELECT\b)/i.test(text)) {
    return false;
  }
  // Transaction control, advisory locks, health and catalogue reads touch no table of ours.
  return !/pg_advisory|sqlite_master|pg_catalog|information_schema|^SELECT 1$|version\(\)/i.test(
    text,
  );
}

/** SQLite's plan line for a walk of the webhook queue in its key order (`WITHOUT ROWID`). */
const QUEUE_READ = /^SCAN (webhook_queue|WebhookQueued|q)$/;

/** The plan lines that read a whole table; empty when every access is through an index. */
function sqliteScans(path: string, statements: readonly Captured[]): string[][] {
  const db = new Database(path, { readonly: true });
  try {
    return statements.map(({ sql, parameters }) => {
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...parameters) as {
        detail: string;
      }[];
      const details = plan.map((row) => row.detail);
      // A queue is read from its head in key order, a LIMIT at a time: a scan that stops there.
      const headOfQueue =
        /\bLIMIT\b/.test(sql) && !details.some((detail) => /TEMP B-TREE/.test(detail));
      return details.filter(
        (detail) =>
          /^SCAN /.test(detail) &&
          !/^SCAN (CONSTANT ROW|\()/.test(detail) &&
          !(headOfQueue && QUEUE_READ.test(detail)),
      );
    });
  } finally {
    db.close();
  }
}

async function postgresScans(t: TestApp, statements: readonly Captured[]): Promise<string[][]> {
  const runner = t.dataSource.createQueryRunner();
  try {
    await runner.query('SET enable_seqscan = off');
    const scans: string[][] = [];
    for (const { sql, parameters } of statements) {
      const plan = (await runner.query(`EXPLAIN ${sql}`, [...parameters])) as {
        'QUERY PLAN': string;
      }[];
      scans.push(plan.map((row) => row['QUERY PLAN']).filter((line) => /Seq Scan/.test(line)));
    }
    await runner.query('RESET enable_seqscan');
    return scans;
  } finally {
    await runner.release();
  }
}

interface AuthBody {
  readonly accessToken: string;
  readonly refreshToken: string;
}

describe('query plans of the request paths', () => {
  const sink = useSmtpSink();
  const t = useSharedTestApp(() => ({
    environment: {
      Smtp__Url: sink.url,
      Smtp__From: 'Keygate <no-reply@keygate.test>',
      Mail__ResetPasswordUrl: 'https://app.example.com/reset-password?token={token}',
      Mail__VerifyEmailUrl: 'https://app.example.com/verify-email?token={token}',
      // The session check adds its read to every protected route.
      Jwt__RequireActiveSession: 'true',
      EmailCode__Enabled: 'true',
      EmailCode__LinkUrl: 'https://app.example.com/sign-in/email-code?token={token}',
      // Every event is queued for a webhook subscription, and delivered meanwhile.
      Webhooks__EncryptionKeys: Buffer.alloc(32, 1).toString('base64'),
      Webhooks__AllowPrivateDestinations: 'true',
      Passkeys__RpId: 'example.com',
      Passkeys__Origins: 'https://app.example.com',
    },
    clock: new FakeClock(new Date()),
  }));

  /** The answer, once it has the expected status (the body is shown when it has not). */
  const expectStatus = async (
    response: Promise<TestResponse>,
    status: number,
  ): Promise<TestResponse> => {
    const settled = await response;
    if (settled.status !== status) {
      expect({ status: settled.status, body: settled.text }).toEqual({ status });
    }
    return settled;
  };

  async function mailSettled(): Promise<void> {
    const sender = t.app.get(MailSender);
    sender.wake();
    await sender.idle();
    const webhooks = t.app.get(WebhookSender);
    webhooks.wake();
    await webhooks.idle();
  }

  /** Every route of the interface and of the account additions, as a person would use them. */
  async function everyRequestPath(): Promise<void> {
    const alice = await registerUser(t);
    const bob = await registerUser(t);
    await expectStatus(t.post(LOGIN, { email: alice.email, password: 'Wrong!pass1' }), 401);
    await expectStatus(
      t.post(LOGIN, { email: 'nobody@example.com', password: alice.password }),
      401,
    );
    const login = await expectStatus(
      t.post(LOGIN, { email: alice.email, password: alice.password }),
      200,
    );
    const session = login.json<AuthBody>();
    await expectStatus(t.get(ME, session.accessToken), 200);

    const rotated = await expectStatus(
      t.post(REFRESH, { refreshToken: session.refreshToken }),
      200,
    );
    const current = rotated.json<AuthBody>();
    await expectStatus(
      t.request(SESSIONS, {
        headers: {
          authorization: `Bearer ${current.accessToken}`,
          'x-refresh-token': current.refreshToken,
        },
      }),
      200,
    );
    // Reuse of the rotated token: the whole family is revoked.
    await expectStatus(t.post(REFRESH, { refreshToken: session.refreshToken }), 401);
    await expectStatus(
      t.post(REVOKE, { refreshToken: alice.refreshToken }, alice.accessToken),
      200,
    );
    await expectStatus(t.post(REFRESH, { refreshToken: 'not-a-token-that-exists' }), 401);

    const [verification] = await sink.waitFor(alice.email);
    await expectStatus(t.post(EMAIL_VERIFY, { token: tokenOf(verification.link) }), 200);
    await expectStatus(t.post(EMAIL_VERIFY_RESEND, {}, bob.accessToken), 202);

    const fresh = await expectStatus(
      t.post(LOGIN, { email: alice.email, password: alice.password }),
      200,
    );
    const kept = fresh.json<AuthBody>();
    await expectStatus(
      t.post(
        REVOKE_ALL_SESSIONS,
        { keepCurrent: true, refreshToken: kept.refreshToken },
        kept.accessToken,
      ),
      200,
    );
    await expectStatus(
      t.post(
        PASSWORD_CHANGE,
        { currentPassword: alice.password, newPassword: 'N3w!secure' },
        kept.accessToken,
      ),
      200,
    );
    // The change keeps the session its access token names.
    await expectStatus(t.post(REVOKE_ALL_SESSIONS, {}, kept.accessToken), 200);

    await expectStatus(t.post(EMAIL_CODE_SEND, { email: alice.email }), 202);
    await expectStatus(t.post(EMAIL_CODE_SEND, { email: 'nobody@example.com' }), 202);
    await mailSettled();
    const codeMail = sink.to(alice.email).find((mail) => mail.link?.includes('email-code'));
    const code = /^(\d{6})$/m.exec(codeMail?.text ?? '')?.[1] ?? '';
    const wrong = code === '000000' ? '000001' : '000000';
    await expectStatus(t.post(EMAIL_CODE_LOGIN, { email: alice.email, code: wrong }), 401);
    await expectStatus(t.post(EMAIL_CODE_LOGIN, { email: alice.email, code }), 200);
    await expectStatus(t.post(EMAIL_CODE_LOGIN, { token: tokenOf(codeMail?.link ?? null) }), 401);

    await expectStatus(t.post(PASSWORD_FORGOT, { email: bob.email }), 202);
    await expectStatus(t.post(PASSWORD_FORGOT, { email: 'nobody@example.com' }), 202);
    await mailSettled();
    const reset = sink.to(bob.email).find((mail) => mail.link?.includes('reset-password'));
    await expectStatus(
      t.post(PASSWORD_RESET, { token: tokenOf(reset?.link ?? null), newPassword: 'R3set!pass' }),
      200,
    );
    const bobAgain = await expectStatus(
      t.post(LOGIN, { email: bob.email, password: 'R3set!pass' }),
      200,
    );
    const bobSession = bobAgain.json<AuthBody>();
    await expectStatus(
      t.post(
        EMAIL_CHANGE,
        { password: 'R3set!pass', newEmail: `moved-${bob.email}` },
        bobSession.accessToken,
      ),
      202,
    );
    await mailSettled();
    await expectStatus(
      t.request(ME, {
        method: 'DELETE',
        body: JSON.stringify({ password: 'R3set!pass' }),
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${bobSession.accessToken}`,
        },
      }),
      200,
    );
    await mailSettled();
  }

  /** Every admin API route (issue 28), with every filter of the listings, as a support tool. */
  async function everyAdminPath(): Promise<void> {
    const origin = internalOrigin('cli', t.app.get(RandomSource));
    const { secret } = await t.app
      .get(AdminKeysService)
      .create(
        `plans-${randomUUID().slice(0, 8)}`,
        ['users:read', 'users:write', 'sessions:write', 'audit:read'],
        origin,
      );
    const admin = (method: string, path: string, status: number): Promise<TestResponse> =>
      expectStatus(
        t.request(path, {
          method,
          headers: {
            authorization: `Bearer ${secret}`,
            ...(method === 'GET' ? {} : { 'content-type': 'application/json' }),
          },
          ...(method === 'GET' ? {} : { body: '{"reason":"plans"}' }),
        }),
        status,
      );
    const carol = await registerUser(t);
    const users = '/api/admin/users';
    await expectStatus(t.request(users, { headers: { authorization: 'Bearer kga_unknown' } }), 401);
    const page = await admin('GET', `${users}?limit=1`, 200);
    const cursor = page.json<{ nextCursor: string }>().nextCursor;
    await admin('GET', `${users}?limit=1&cursor=${cursor}`, 200);
    await admin('GET', `${users}?email=${encodeURIComponent(carol.email)}`, 200);
    await admin('GET', `${users}?emailPrefix=${carol.email.slice(0, 6)}&state=active`, 200);
    for (const state of ['active', 'deactivated', 'locked', 'unverified', 'mfa']) {
      await admin('GET', `${users}?state=${state}`, 200);
    }
    await admin('GET', `${users}/${carol.id}`, 200);
    const sessions = await admin('GET', `${users}/${carol.id}/sessions`, 200);
    const [session] = sessions.json<{ sessions: { id: string }[] }>().sessions;
    await admin('DELETE', `${users}/${carol.id}/sessions/${session.id}`, 200);
    for (const change of [
      'unlock',
      'verify-email',
      'mfa-reset',
      'logout',
      'deactivate',
      'activate',
    ]) {
      await admin('POST', `${users}/${carol.id}/${change}`, 200);
    }
    await admin('POST', `${users}/${carol.id}/password-reset-mail`, 202);
    const audit = await admin('GET', '/api/admin/audit?limit=2', 200);
    const before = audit.json<{ nextCursor: string }>().nextCursor;
    await admin('GET', `/api/admin/audit?limit=2&cursor=${before}`, 200);
    await admin(
      'GET',
      `/api/admin/audit?userId=${carol.id}&from=2020-01-01T00:00:00Z&to=2999-01-01T00:00:00Z`,
      200,
    );
    await admin('GET', '/api/admin/audit?type=login_failed', 200);
    await admin('GET', `/api/admin/audit/export?userId=${carol.id}`, 200);
    await admin('DELETE', `${users}/${carol.id}`, 200);
    await mailSettled();
  }

  it('should read no whole table on any route', async () => {
    const receiver = await WebhookReceiver.start();
    const subscription = await t.app
      .get(WebhooksService)
      .add({ url: receiver.url, events: 'all' }, cliOrigin(t.app.get(RandomSource)));
    receiver.trust(subscription.secret);
    // Its own admin_webhook_added is its first delivery: the events from there on are the routes'.
    // Queued, or moved into the deliveries if the sender claimed it already.
    const [{ eventId: since }] = await t.dataSource.query<{ eventId: string }[]>(
      'SELECT "eventId" FROM "webhook_queue" UNION ALL SELECT "eventId" FROM "webhook_deliveries"',
    );
    const recorder = onPostgres ? postgresRecorder() : sqliteRecorder();
    recorder.start();
    let captured: Captured[];
    try {
      await everyRequestPath();
      await everyAdminPath();
    } finally {
      captured = recorder.stop();
      await receiver.stop();
    }
    // Every event recorded since the subscription, whichever path wrote it (a unit of work, a
    // synchronous SQLite unit, PostgreSQL's one-statement start, rotation and revoke), has its
    // delivery, and the receiver got each one: none forgotten.
    const events = await t.dataSource.query<{ id: Buffer | string }[]>(
      'SELECT "id" FROM "auth_events"',
    );
    const eventIds = events
      .map(({ id }) => (typeof id === 'string' ? id : eventIdText(id)))
      .filter((id) => id >= since);
    const deliveredIds = new Set(receiver.unique().map((w) => w.payload.data.eventId));
    expect(eventIds.length).toBeGreaterThan(20);
    expect(eventIds.filter((id) => !deliveredIds.has(id))).toEqual([]);

    const distinct = new Map<string, Captured>();
    for (const statement of captured.filter((s) => isPlanned(s.sql))) {
      distinct.set(statement.sql, statement);
    }
    const statements = [...distinct.values()];
    const scans = onPostgres
      ? await postgresScans(t, statements)
      : sqliteScans(t.database.connectionString, statements);

    const violations = statements
      .map((statement, i) => ({ sql: statement.sql, scans: scans[i] }))
      .filter((entry) => entry.scans.length > 0);
    expect(violations).toEqual([]);
    // The capture saw the service's reads and writes of its tables, not nothing.
    const tables = [
      'users',
      'sessions',
      'refresh_tokens',
      'account_tokens',
      'mail_outbox',
      'email_codes',
      'webhook_subscriptions',
      'webhook_queue',
      'webhook_deliveries',
      'admin_keys',
      'auth_events',
      'totp_factors',
    ];
    expect(tables.filter((table) => !statements.some((s) => s.sql.includes(table)))).toEqual([]);
    expect(statements.length).toBeGreaterThan(20);
  });

  /** The passkey routes: add one (password proof), list, sign in with it, rename, remove. */
  async function passkeyPaths(): Promise<void> {
    const carol = await registerUser(t);
    const authenticator = new SoftwareAuthenticator('example.com', 'https://app.example.com');
    const creation = await expectStatus(
      t.post(PASSKEY_REGISTER_OPTIONS, { password: carol.password }, carol.accessToken),
      200,
    );
    const created = await expectStatus(
      t.post(
        PASSKEY_REGISTER_VERIFY,
        { response: authenticator.create(creation.json()) },
        carol.accessToken,
      ),
      201,
    );
    const { id } = created.json<{ id: string }>();
    await expectStatus(t.get(PASSKEYS, carol.accessToken), 200);
    const request = await expectStatus(t.post(PASSKEY_LOGIN_OPTIONS, {}), 200);
    const assertion = authenticator.get(request.json());
    await expectStatus(t.post(PASSKEY_LOGIN_VERIFY, { response: assertion }), 200);
    // Replayed: the challenge is gone.
    await expectStatus(t.post(PASSKEY_LOGIN_VERIFY, { response: assertion }), 401);
    const auth = (method: string, body?: unknown) => ({
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        authorization: `Bearer ${carol.accessToken}`,
      },
    });
    await expectStatus(t.request(`${PASSKEYS}/${id}`, auth('PATCH', { name: 'Teléfono' })), 200);
    await expectStatus(t.request(`${PASSKEYS}/${id}`, auth('DELETE')), 204);
    await expectStatus(
      t.post(PASSKEY_LOGIN_VERIFY, {
        response: authenticator.get((await t.post(PASSKEY_LOGIN_OPTIONS, {})).json()),
      }),
      401,
    );
  }

  it('should read no whole table on the passkey routes', async () => {
    const recorder = onPostgres ? postgresRecorder() : sqliteRecorder();
    recorder.start();
    let captured: Captured[];
    try {
      await passkeyPaths();
    } finally {
      captured = recorder.stop();
    }

    const statements = [
      ...new Map(captured.filter((s) => isPlanned(s.sql)).map((s) => [s.sql, s])).values(),
    ];
    const scans = onPostgres
      ? await postgresScans(t, statements)
      : sqliteScans(t.database.connectionString, statements);

    expect(
      statements
        .map((statement, i) => ({ sql: statement.sql, scans: scans[i] }))
        .filter((entry) => entry.scans.length > 0),
    ).toEqual([]);
    const tables = ['"passkeys"', '"passkey_challenges"'];
    expect(tables.filter((table) => !statements.some((s) => s.sql.includes(table)))).toEqual([]);
  });
});
