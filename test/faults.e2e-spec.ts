import Database from 'better-sqlite3';
import { UsersService } from '../src/users/users.service.js';
import { findRefreshToken } from './factories/refresh-token.factory.js';
import {
  createUser,
  DEFAULT_PASSWORD,
  registerUser,
  reloadUser,
} from './factories/user.factory.js';
import { createTestApp, type TestApp } from './utils/create-test-app.js';
import { errorBody } from './utils/expected-bodies.js';

const INTERNAL_ERROR = errorBody(500, 'Ocurrió un error interno.');

describe('faults: a failing write fails closed', () => {
  let t: TestApp;

  beforeEach(async () => {
    t = await createTestApp();
  });

  afterEach(async () => {
    await t.close();
  });

  /** Makes SQLite itself refuse a statement, the way a full disk or an I/O error would. */
  async function refuse(trigger: string, event: string): Promise<() => Promise<void>> {
    await t.dataSource.query(
      `CREATE TRIGGER ${trigger} ${event} BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
    );
    return async () => {
      await t.dataSource.query(`DROP TRIGGER ${trigger}`);
    };
  }

  it('should answer 500 when a failed login cannot be counted, and count nothing', async () => {
    const user = await createUser(t);
    const restore = await refuse('no_counter', 'BEFORE UPDATE ON users');
    const response = await t.post('/api/auth/login', {
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
    const restore = await refuse('no_tokens', 'BEFORE INSERT ON refresh_tokens');
    const response = await t.post('/api/auth/login', {
      email: user.email,
      password: DEFAULT_PASSWORD,
    });
    await restore();
    expect(response.status).toBe(500);
    expect(response.json()).toEqual(INTERNAL_ERROR);
    expect(await t.dataSource.query('SELECT COUNT(*) AS n FROM refresh_tokens')).toEqual([
      { n: 0 },
    ]);
    // The login's own bookkeeping was rolled back with the token.
    expect((await reloadUser(t, user.id)).lastLoginAt).toBeNull();
  });

  it('should answer 500 when a rotation cannot be written, and keep the old token usable', async () => {
    const { refreshToken } = await registerUser(t);
    const restore = await refuse('no_rotation', 'BEFORE INSERT ON refresh_tokens');
    const failed = await t.post('/api/auth/refresh', { refreshToken });
    await restore();
    expect(failed.status).toBe(500);
    expect(failed.json()).toEqual(INTERNAL_ERROR);
    expect(await findRefreshToken(t, refreshToken)).toMatchObject({
      isRevoked: false,
      replacedByTokenId: null,
    });

    const retried = await t.post('/api/auth/refresh', { refreshToken });
    expect(retried.status).toBe(200);
  });

  it('should answer 500 when a registration cannot be written, and leave no user behind', async () => {
    const restore = await refuse('no_register_token', 'BEFORE INSERT ON refresh_tokens');
    const response = await t.post('/api/auth/register', {
      username: 'ghost',
      email: 'ghost@example.com',
      password: DEFAULT_PASSWORD,
    });
    await restore();
    expect(response.status).toBe(500);
    expect(await t.dataSource.query('SELECT COUNT(*) AS n FROM users')).toEqual([{ n: 0 }]);
    const again = await t.post('/api/auth/register', {
      username: 'ghost',
      email: 'ghost@example.com',
      password: DEFAULT_PASSWORD,
    });
    expect(again.status).toBe(201);
  });

  it('should fail a write within the busy timeout, not hang, while another process holds the lock', async () => {
    const user = await createUser(t);
    const other = new Database(t.database.connectionString);
    other.exec('BEGIN IMMEDIATE');
    try {
      const started = Date.now();
      const response = await t.post('/api/auth/login', {
        email: user.email,
        password: 'Wrong!pass1',
      });
      const elapsed = Date.now() - started;
      expect(response.status).toBe(500);
      expect(response.json()).toEqual(INTERNAL_ERROR);
      expect(elapsed).toBeLessThan(9_000);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    // Once the lock is gone the service carries on.
    const response = await t.post('/api/auth/login', {
      email: user.email,
      password: DEFAULT_PASSWORD,
    });
    expect(response.status).toBe(200);
  }, 20_000);
});

describe('faults: lookups never run with a missing filter', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });

  afterAll(async () => {
    await t.close();
  });

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
