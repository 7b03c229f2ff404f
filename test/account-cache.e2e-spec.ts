import { Injectable } from '@nestjs/common';
import { setTimeout as delay } from 'node:timers/promises';
import type pg from 'pg';
import {
  AccountChangeListener,
  LISTENER_NAME,
} from '../src/users/account-cache/account-change-listener.js';
import {
  AccountStateCache,
  STALENESS_BOUND_MS,
} from '../src/users/account-cache/account-state-cache.js';
import { registerUser, type RegisteredUser } from './factories/user.factory.js';
import { createTestApp, type TestApp } from './utils/create-test-app.js';
import { errorBody, publicUser, UNAUTHORIZED_BODY } from './utils/expected-bodies.js';
import { LOGIN, ME, PASSWORD_CHANGE, REVOKE_ALL_SESSIONS } from './utils/routes.js';
import { describeOnPostgres, describeOnSqlite } from './utils/test-database.js';

// Database__AccountCache=on: two instances on one PostgreSQL database, each keeping account
// state in memory, invalidated through LISTEN/NOTIFY. Every change acknowledged on one side (or
// made with SQL, as a person with psql would) must reach the other within STALENESS_BOUND_MS,
// through a killed listening connection too, and while the listener is down every answer is
// strict. Real time here: the bound is a property of real connections.

const ON = { Database__AccountCache: 'on', Jwt__RequireActiveSession: 'true' };
const DEACTIVATED = errorBody(401, 'Cuenta desactivada.');
const NOT_FOUND = errorBody(404, 'Usuario no encontrado.');
const NEW_PASSWORD = 'N3w!passw0rd';
/** How long a test waits for something that should take milliseconds. */
const PATIENCE_MS = 15_000;

/** The real listener, whose reconnections a test can hold back (an unreachable address). */
@Injectable()
class HeldListener extends AccountChangeListener {
  isHeld = false;

  protected override clientOptions(): pg.ClientConfig {
    const options = super.clientOptions();
    return this.isHeld
      ? {
          ...options,
          connectionString: 'postgres://keygate@127.0.0.1:1/held',
          host: '127.0.0.1',
          port: 1,
        }
      : options;
  }
}

interface Observation {
  /** performance.now() when the request was sent. */
  readonly sentAt: number;
  readonly status: number;
  readonly body: unknown;
}

const cacheOf = (t: TestApp): AccountStateCache => t.app.get(AccountStateCache, { strict: false });
const listenerOf = (t: TestApp): HeldListener =>
  t.app.get<AccountChangeListener, HeldListener>(AccountChangeListener, { strict: false });

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = performance.now() + PATIENCE_MS;
  while (!(await condition())) {
    if (performance.now() > deadline) {
      throw new Error(`Still waiting for ${what}`);
    }
    await delay(10);
  }
}

/** `/me` on `t` until it answers `expected`, three callers at once; every answer seen. */
async function watch(
  t: TestApp,
  accessToken: string,
  expected: { readonly status: number; readonly body: unknown },
): Promise<Observation[]> {
  const seen: Observation[] = [];
  const deadline = performance.now() + PATIENCE_MS;
  let isDone = false;
  const caller = async (): Promise<void> => {
    while (!isDone && performance.now() < deadline) {
      const sentAt = performance.now();
      const response = await t.get(ME, accessToken);
      const observation = { sentAt, status: response.status, body: response.json() };
      seen.push(observation);
      if (matches(observation, expected)) {
        isDone = true;
      }
    }
  };
  await Promise.all([caller(), caller(), caller()]);
  return seen;
}

function matches(
  observation: Observation,
  expected: { readonly status: number; readonly body: unknown },
): boolean {
  return observation.status === expected.status && equals(observation.body, expected.body);
}

function equals(actual: unknown, expected: unknown): boolean {
  try {
    expect(actual).toEqual(expected);
    return true;
  } catch {
    return false;
  }
}

/**
 * The bound: the change was acknowledged at `acknowledgedAt`; no request sent more than
 * STALENESS_BOUND_MS later may have been answered as before, and the new answer did come.
 */
function expectWithinBound(
  seen: readonly Observation[],
  acknowledgedAt: number,
  expected: { readonly status: number; readonly body: unknown },
): void {
  expect(seen.some((observation) => matches(observation, expected))).toBe(true);
  const late = seen.filter(
    (observation) =>
      observation.sentAt - acknowledgedAt > STALENESS_BOUND_MS && !matches(observation, expected),
  );
  expect(late).toEqual([]);
}

describeOnPostgres('Database__AccountCache=on, two instances on one PostgreSQL', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    a = await createTestApp({ environment: ON });
    b = await createTestApp({
      environment: ON,
      database: a.database,
      override: (builder) => builder.overrideProvider(AccountChangeListener).useClass(HeldListener),
    });
  }, 120_000);

  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  beforeEach(async () => {
    await until(() => cacheOf(a).isFresh() && cacheOf(b).isFresh(), 'both caches to be fresh');
  });

  /** A user registered on A whose profile B has read (and, being fresh, kept). */
  async function userKnownToB(): Promise<RegisteredUser> {
    const user = await registerUser(a);
    const me = await b.get(ME, user.accessToken);
    expect(me.status).toBe(200);
    expect(me.json()).toEqual({ ...publicUser(user), id: user.id });
    return user;
  }

  const setActive = (user: RegisteredUser, isActive: boolean): Promise<unknown> =>
    a.database.query('UPDATE "users" SET "isActive" = $1 WHERE "id" = $2', [isActive, user.id]);

  it('should answer from memory on B: a change the trigger does not announce stays unseen there', async () => {
    const user = await userKnownToB();
    await a.database.query('ALTER TABLE "users" DISABLE TRIGGER "TRG_users_notify_change"');
    try {
      await a.database.query('UPDATE "users" SET "username" = $1 WHERE "id" = $2', [
        'renamed',
        user.id,
      ]);
      const cached = await b.get(ME, user.accessToken);
      expect(cached.json()).toMatchObject({ username: user.username });
    } finally {
      await a.database.query('ALTER TABLE "users" ENABLE TRIGGER "TRG_users_notify_change"');
    }
    // Any announced change of the row reaches B (here a second rename, which is the row's state).
    await a.database.query('UPDATE "users" SET "username" = $1 WHERE "id" = $2', [
      'renamed-again',
      user.id,
    ]);
    const acknowledgedAt = performance.now();
    const expected = {
      status: 200,
      body: {
        id: user.id,
        username: 'renamed-again',
        email: user.email,
        createdAt: expect.any(String),
      },
    };
    expectWithinBound(await watch(b, user.accessToken, expected), acknowledgedAt, expected);
  });

  it('should refuse on B, within the bound, an account deactivated with SQL, and let it in once reactivated', async () => {
    const user = await userKnownToB();

    await setActive(user, false);
    const deactivatedAt = performance.now();
    const refused = { status: 401, body: DEACTIVATED };
    expectWithinBound(await watch(b, user.accessToken, refused), deactivatedAt, refused);

    await setActive(user, true);
    const reactivatedAt = performance.now();
    const admitted = { status: 200, body: expect.objectContaining({ id: user.id }) };
    expectWithinBound(await watch(b, user.accessToken, admitted), reactivatedAt, admitted);
  });

  it('should answer 404 on B, within the bound, once A acknowledged the deletion', async () => {
    const user = await userKnownToB();
    const other = (await a.post(LOGIN, { email: user.email, password: user.password })).json<{
      accessToken: string;
    }>();

    const deleted = await a.request(ME, {
      method: 'DELETE',
      body: JSON.stringify({ password: user.password }),
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${user.accessToken}`,
      },
    });
    const deletedAt = performance.now();
    expect(deleted.status).toBe(200);

    const gone = { status: 404, body: NOT_FOUND };
    expectWithinBound(await watch(b, other.accessToken, gone), deletedAt, gone);
  });

  it("should refuse on B, within the bound, the other sessions' tokens once A changed the password", async () => {
    const user = await userKnownToB();
    const other = (await a.post(LOGIN, { email: user.email, password: user.password })).json<{
      accessToken: string;
    }>();
    expect((await b.get(ME, other.accessToken)).status).toBe(200);

    const changed = await a.post(
      PASSWORD_CHANGE,
      { currentPassword: user.password, newPassword: NEW_PASSWORD },
      user.accessToken,
    );
    const changedAt = performance.now();
    expect(changed.status).toBe(200);

    const ended = { status: 401, body: UNAUTHORIZED_BODY };
    expectWithinBound(await watch(b, other.accessToken, ended), changedAt, ended);
  });

  it('should refuse on B, within the bound, every token of the account once A logged it out everywhere', async () => {
    const user = await userKnownToB();

    const revoked = await a.post(REVOKE_ALL_SESSIONS, {}, user.accessToken);
    const revokedAt = performance.now();
    expect(revoked.status).toBe(200);

    const ended = { status: 401, body: UNAUTHORIZED_BODY };
    expectWithinBound(await watch(b, user.accessToken, ended), revokedAt, ended);
  });

  it('should reach B within the bound when its listening connection is killed just before the change', async () => {
    const user = await userKnownToB();
    const killed = listenerOf(b).backendPid;

    await a.database.query('SELECT pg_terminate_backend($1)', [killed]);
    await setActive(user, false);
    const deactivatedAt = performance.now();

    const refused = { status: 401, body: DEACTIVATED };
    expectWithinBound(await watch(b, user.accessToken, refused), deactivatedAt, refused);
    await until(
      () => listenerOf(b).backendPid !== null && listenerOf(b).backendPid !== killed,
      'B to listen again',
    );
  });

  it('should read strictly on B while its listener is down, and use the cache again once it is back', async () => {
    const user = await userKnownToB();
    const listener = listenerOf(b);
    const killed = listener.backendPid;
    const listening = await a.database.query<{ pid: number }>(
      'SELECT "pid" FROM pg_stat_activity WHERE "application_name" = $1 AND "pid" = $2',
      [LISTENER_NAME, killed],
    );
    expect(listening).toEqual([{ pid: killed }]);

    listener.isHeld = true;
    try {
      await a.database.query('SELECT pg_terminate_backend($1)', [killed]);
      await until(() => !cacheOf(b).isFresh(), 'B to notice');
      expect(cacheOf(b).size).toBe(0);

      // Down: every answer reflects the row as committed, at once, with nothing kept.
      for (const isActive of [false, true, false, true]) {
        await setActive(user, isActive);
        const me = await b.get(ME, user.accessToken);
        expect(me.status).toBe(isActive ? 200 : 401);
        expect(me.json()).toEqual(
          isActive ? expect.objectContaining({ id: user.id }) : DEACTIVATED,
        );
        expect(cacheOf(b).isFresh()).toBe(false);
        expect(cacheOf(b).size).toBe(0);
      }
    } finally {
      listener.isHeld = false;
    }

    await until(() => cacheOf(b).isFresh(), 'B to listen again and prove it');
    expect((await b.get(ME, user.accessToken)).status).toBe(200);
    expect(cacheOf(b).size).toBeGreaterThan(0);
    await setActive(user, false);
    const deactivatedAt = performance.now();
    const refused = { status: 401, body: DEACTIVATED };
    expectWithinBound(await watch(b, user.accessToken, refused), deactivatedAt, refused);
  });
});

describeOnSqlite('Database__AccountCache=on on SQLite', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ environment: ON });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('should be ignored: every request reads its account, as with the cache off', async () => {
    const user = await registerUser(t);
    expect(cacheOf(t).isEnabled).toBe(false);
    expect((await t.get(ME, user.accessToken)).status).toBe(200);

    await t.database.query('UPDATE "users" SET "isActive" = 0 WHERE "id" = $1', [user.id]);
    const me = await t.get(ME, user.accessToken);

    expect(me.status).toBe(401);
    expect(me.json()).toEqual(DEACTIVATED);
  });
});
