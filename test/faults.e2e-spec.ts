import Database from 'better-sqlite3';
import pg from 'pg';
import { RefreshToken } from '../src/tokens/entities/refresh-token.entity.js';
import { User } from '../src/users/entities/user.entity.js';
import { UsersService } from '../src/users/users.service.js';
import { findRefreshToken } from './factories/refresh-token.factory.js';
import {
  createUser,
  DEFAULT_PASSWORD,
  registerUser,
  reloadUser,
} from './factories/user.factory.js';
import { type TestApp, useSharedTestApp, useTestApp } from './utils/create-test-app.js';
import { errorBody } from './utils/expected-bodies.js';
import { LOGIN, REFRESH, REGISTER } from './utils/routes.js';
import { onPostgres } from './utils/test-database.js';

const INTERNAL_ERROR = errorBody(500, 'Ocurrió un error interno.');
/**
 * Database__StatementTimeoutMs in the lock test: SQLite's busy timeout, PostgreSQL's
 * statement_timeout.
 */
const STATEMENT_TIMEOUT_MS = 1_500;

type Table = 'users' | 'refresh_tokens';
type WriteEvent = 'INSERT' | 'UPDATE';

/**
 * Makes the database itself refuse every `event` on `table`, the way a full disk or an I/O error
 * would: a trigger that raises, created outside the service. Returns the undo.
 */
async function refuse(t: TestApp, table: Table, event: WriteEvent): Promise<() => Promise<void>> {
  const name = `refuse_${table}_${event.toLowerCase()}`;
  if (onPostgres) {
    // t.database.query runs in the app's own schema (search_path), so the function lands there.
    await t.database.query(
      `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected fault'; END $$`,
    );
    await t.database.query(
      `CREATE TRIGGER ${name} BEFORE ${event} ON ${table} FOR EACH ROW EXECUTE FUNCTION ${name}()`,
    );
    return async () => {
      await t.database.query(`DROP TRIGGER ${name} ON ${table}`);
      await t.database.query(`DROP FUNCTION ${name}()`);
    };
  }
  await t.database.query(
    `CREATE TRIGGER ${name} BEFORE ${event} ON ${table} BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
  );
  return async () => {
    await t.database.query(`DROP TRIGGER ${name}`);
  };
}

/** A lock on the user's row held by another client of the database, until `release`. */
interface HeldLock {
  release(): Promise<void>;
}

/**
 * Another process takes the lock that the service's write to `userId` needs: on SQLite the
 * database's write lock (BEGIN IMMEDIATE on a second connection), on PostgreSQL the user's row
 * (SELECT ... FOR UPDATE in an open transaction).
 */
async function holdLockOnUser(t: TestApp, userId: string): Promise<HeldLock> {
  if (onPostgres) {
    const other = new pg.Client({ connectionString: t.database.connectionString });
    await other.connect();
    try {
      await other.query('BEGIN');
      const locked = await other.query('SELECT id FROM users WHERE id = $1 FOR UPDATE', [userId]);
      expect(locked.rowCount).toBe(1);
    } catch (error: unknown) {
      await other.end();
      throw error;
    }
    return {
      release: async () => {
        try {
          await other.query('ROLLBACK');
        } finally {
          await other.end();
        }
      },
    };
  }
  const other = new Database(t.database.connectionString);
  other.exec('BEGIN IMMEDIATE');
  return {
    release: () => {
      try {
        other.exec('ROLLBACK');
      } finally {
        other.close();
      }
      return Promise.resolve();
    },
  };
}

describe('faults: a failing write fails closed', () => {
  const t = useTestApp();

  it('should answer 500 when a failed login cannot be counted, and count nothing', async () => {
    const user = await createUser(t);
    const restore = await refuse(t, 'users', 'UPDATE');
    const response = await t.post(LOGIN, {
      email: user.email,
      password: 'Wrong!pass1',
    });
    await restore();
    expect(response.status).toBe(500);
    expect(response.json()).toEqual(INTERNAL_ERROR);
    expect((await reloadUser(t, user.id)).failedLoginAttempts).toBe(0);
  });

  it('should answer 500 and issue no tokens when a successful login cannot be written', async () => {
    const user = await createUser(t);
    const restore = await refuse(t, 'refresh_tokens', 'INSERT');
    const response = await t.post(LOGIN, {
      email: user.email,
      password: DEFAULT_PASSWORD,
    });
    await restore();
    expect(response.status).toBe(500);
    expect(response.json()).toEqual(INTERNAL_ERROR);
    expect(await t.dataSource.getRepository(RefreshToken).count()).toBe(0);
    // The login's own bookkeeping was rolled back with the token.
    expect((await reloadUser(t, user.id)).lastLoginAt).toBeNull();
  });

  it('should answer 500 when a rotation cannot be written, and keep the old token usable', async () => {
    const { refreshToken } = await registerUser(t);
    const restore = await refuse(t, 'refresh_tokens', 'INSERT');
    const failed = await t.post(REFRESH, { refreshToken });
    await restore();
    expect(failed.status).toBe(500);
    expect(failed.json()).toEqual(INTERNAL_ERROR);
    expect(await findRefreshToken(t, refreshToken)).toMatchObject({
      isRevoked: false,
      replacedByTokenId: null,
    });

    const retried = await t.post(REFRESH, { refreshToken });
    expect(retried.status).toBe(200);
  });

  it('should answer 500 when a registration cannot be written, and leave no user behind', async () => {
    const restore = await refuse(t, 'refresh_tokens', 'INSERT');
    const response = await t.post(REGISTER, {
      username: 'ghost',
      email: 'ghost@example.com',
      password: DEFAULT_PASSWORD,
    });
    await restore();
    expect(response.status).toBe(500);
    expect(response.json()).toEqual(INTERNAL_ERROR);
    expect(await t.dataSource.getRepository(User).count()).toBe(0);
    const again = await t.post(REGISTER, {
      username: 'ghost',
      email: 'ghost@example.com',
      password: DEFAULT_PASSWORD,
    });
    expect(again.status).toBe(201);
  });
});

describe('faults: a write that waits for a lock held elsewhere', () => {
  const t = useTestApp({
    environment: { Database__StatementTimeoutMs: String(STATEMENT_TIMEOUT_MS) },
  });

  it('should fail within the statement timeout, not hang, and write nothing', async () => {
    const user = await createUser(t);
    const lock = await holdLockOnUser(t, user.id);
    try {
      const started = Date.now();
      const response = await t.post(LOGIN, {
        email: user.email,
        password: 'Wrong!pass1',
      });
      const elapsed = Date.now() - started;
      expect(response.status).toBe(500);
      expect(response.json()).toEqual(INTERNAL_ERROR);
      // It waited for the lock before giving up, and gave up soon after the timeout.
      expect(elapsed).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT_MS - 200);
      expect(elapsed).toBeLessThan(STATEMENT_TIMEOUT_MS + 4_000);
    } finally {
      await lock.release();
    }
    expect((await reloadUser(t, user.id)).failedLoginAttempts).toBe(0);

    // Once the lock is gone the service carries on.
    const response = await t.post(LOGIN, {
      email: user.email,
      password: DEFAULT_PASSWORD,
    });
    expect(response.status).toBe(200);
  }, 20_000);
});

describe('faults: lookups never run with a missing filter', () => {
  const t = useSharedTestApp();

  it.each([undefined, null])(
    'should refuse a user lookup by %s instead of matching a row',
    async (value) => {
      await createUser(t);
      const users = t.app.get(UsersService);
      await expect(users.findByEmail(value as unknown as string)).rejects.toThrow();
      await expect(users.findById(value as unknown as string)).rejects.toThrow();
    },
  );
});
