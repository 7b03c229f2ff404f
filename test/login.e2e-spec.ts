import type { User } from '../src/users/entities/user.entity.js';
import { findRefreshToken } from './factories/refresh-token.factory.js';
import { createUser, DEFAULT_PASSWORD, reloadUser } from './factories/user.factory.js';
import { type TestResponse, useSharedTestApp } from './utils/create-test-app.js';
import { authResponse, errorBody, problemDetails } from './utils/expected-bodies.js';
import { LOGIN, ME } from './utils/routes.js';

const START = new Date('2026-02-03T10:00:00.000Z');
const MINUTE_MS = 60 * 1000;
const FIFTEEN_MINUTES_MS = 15 * MINUTE_MS;
const WRONG_PASSWORD = 'Wr0ng!Password';

interface AuthBody {
  accessToken: string;
  refreshToken: string;
  accessTokenExpiry: string;
  user: { id: string; username: string; email: string; createdAt: string };
}

const at = (ms: number): Date => new Date(START.getTime() + ms);

describe('POST /api/auth/login', () => {
  const t = useSharedTestApp();

  beforeEach(() => {
    t.clock.set(START);
  });

  const login = (email: string, password: string): Promise<TestResponse> =>
    t.post(LOGIN, { email, password });

  /** Sends `times` wrong passwords, each answered with the generic 401. */
  async function failLogins(user: User, times: number): Promise<void> {
    for (let attempt = 1; attempt <= times; attempt += 1) {
      const res = await login(user.email, WRONG_PASSWORD);
      expect(res.status).toBe(401);
      expect(res.json()).toEqual(errorBody(401, 'Credenciales inválidas.'));
    }
  }

  describe('success', () => {
    it('should answer 200 with the auth response of the user', async () => {
      const user = await createUser(t);

      const res = await login(user.email, DEFAULT_PASSWORD);

      expect(res.status).toBe(200);
      const json = res.json<AuthBody>();
      expect(json).toEqual({
        ...authResponse(user),
        accessTokenExpiry: at(FIFTEEN_MINUTES_MS).toISOString(),
        user: {
          id: user.id,
          username: user.username,
          email: user.email,
          createdAt: user.createdAt.toISOString(),
        },
      });
      expect(Object.keys(json.user).sort()).toEqual(['createdAt', 'email', 'id', 'username']);
      const me = await t.get(ME, json.accessToken);
      expect(me.status).toBe(200);
      expect(me.json()).toEqual(json.user);
    });

    it('should find the user whatever the case and surrounding spaces of the e-mail', async () => {
      const user = await createUser(t, { email: 'carol.case@example.com' });

      const res = await login('  Carol.CASE@Example.com  ', DEFAULT_PASSWORD);

      expect(res.status).toBe(200);
      expect(res.json<AuthBody>().user).toEqual(
        expect.objectContaining({ id: user.id, email: 'carol.case@example.com' }),
      );
    });

    it('should set lastLoginAt to now and reset failedLoginAttempts and lockoutEnd', async () => {
      const user = await createUser(t, {
        failedLoginAttempts: 3,
        lockoutEnd: at(-MINUTE_MS),
        lastLoginAt: new Date('2025-12-01T00:00:00.000Z'),
      });
      const now = new Date('2026-02-03T10:04:05.678Z');
      t.clock.set(now);

      const res = await login(user.email, DEFAULT_PASSWORD);

      expect(res.status).toBe(200);
      expect(await reloadUser(t, user.id)).toEqual(
        expect.objectContaining({ failedLoginAttempts: 0, lockoutEnd: null, lastLoginAt: now }),
      );
    });

    it('should record the client IP on the refresh token it issues', async () => {
      const user = await createUser(t);

      const res = await login(user.email, DEFAULT_PASSWORD);

      expect(res.status).toBe(200);
      const token = await findRefreshToken(t, res.json<AuthBody>().refreshToken);
      expect(token).toEqual(
        expect.objectContaining({
          userId: user.id,
          createdByIp: '127.0.0.1',
          createdAt: START,
          isRevoked: false,
        }),
      );
    });
  });

  describe('check order (SPEC 4.2)', () => {
    it('should answer 401 Credenciales inválidas. for an unknown e-mail', async () => {
      const res = await login('nobody-at-all@example.com', DEFAULT_PASSWORD);

      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.json()).toEqual(errorBody(401, 'Credenciales inválidas.'));
    });

    it('should answer 401 Credenciales inválidas. for a wrong password', async () => {
      const user = await createUser(t);

      const res = await login(user.email, WRONG_PASSWORD);

      expect(res.status).toBe(401);
      expect(res.json()).toEqual(errorBody(401, 'Credenciales inválidas.'));
    });

    it.each([
      ['the correct password', DEFAULT_PASSWORD],
      ['a wrong password', WRONG_PASSWORD],
    ])(
      'should answer 401 Cuenta desactivada. for a deactivated account with %s',
      async (_name, password) => {
        const user = await createUser(t, { isActive: false });
        const before = await reloadUser(t, user.id);

        const res = await login(user.email, password);

        expect(res.status).toBe(401);
        expect(res.json()).toEqual(errorBody(401, 'Cuenta desactivada.'));
        expect(await reloadUser(t, user.id)).toEqual(before);
      },
    );

    it.each([
      ['the correct password', DEFAULT_PASSWORD],
      ['a wrong password', WRONG_PASSWORD],
    ])(
      'should answer 401 Cuenta desactivada. for a deactivated, locked account with %s',
      async (_name, password) => {
        const user = await createUser(t, {
          isActive: false,
          failedLoginAttempts: 5,
          lockoutEnd: at(10 * MINUTE_MS),
        });
        const before = await reloadUser(t, user.id);

        const res = await login(user.email, password);

        expect(res.status).toBe(401);
        expect(res.json()).toEqual(errorBody(401, 'Cuenta desactivada.'));
        expect(await reloadUser(t, user.id)).toEqual(before);
      },
    );

    it.each([
      ['the correct password', DEFAULT_PASSWORD],
      ['a wrong password', WRONG_PASSWORD],
    ])(
      'should answer the lockout message for a locked account with %s, leaving it unchanged',
      async (_name, password) => {
        const user = await createUser(t, {
          failedLoginAttempts: 5,
          lockoutEnd: at(10 * MINUTE_MS),
        });
        const before = await reloadUser(t, user.id);

        const res = await login(user.email, password);

        expect(res.status).toBe(401);
        expect(res.json()).toEqual(
          errorBody(401, 'Cuenta bloqueada temporalmente. Intenta en 11 minuto(s).'),
        );
        expect(await reloadUser(t, user.id)).toEqual(before);
      },
    );
  });

  describe('account states (SPEC 3.1)', () => {
    it('should increment and save the counter for each wrong password below 5, without locking', async () => {
      const user = await createUser(t);

      for (let attempt = 1; attempt <= 4; attempt += 1) {
        const res = await login(user.email, WRONG_PASSWORD);

        expect(res.status).toBe(401);
        expect(res.json()).toEqual(errorBody(401, 'Credenciales inválidas.'));
        expect(await reloadUser(t, user.id)).toEqual(
          expect.objectContaining({ failedLoginAttempts: attempt, lockoutEnd: null }),
        );
      }
      const res = await login(user.email, DEFAULT_PASSWORD);
      expect(res.status).toBe(200);
    });

    it('should lock for exactly 15 minutes on the 5th wrong password, with the generic message', async () => {
      const user = await createUser(t);
      await failLogins(user, 4);
      const now = new Date('2026-02-03T10:07:08.009Z');
      t.clock.set(now);

      const res = await login(user.email, WRONG_PASSWORD);

      expect(res.status).toBe(401);
      expect(res.json()).toEqual(errorBody(401, 'Credenciales inválidas.'));
      expect(await reloadUser(t, user.id)).toEqual(
        expect.objectContaining({
          failedLoginAttempts: 5,
          lockoutEnd: new Date(now.getTime() + FIFTEEN_MINUTES_MS),
          lastLoginAt: null,
        }),
      );
      const locked = await login(user.email, DEFAULT_PASSWORD);
      expect(locked.status).toBe(401);
      expect(locked.json()).toEqual(
        errorBody(401, 'Cuenta bloqueada temporalmente. Intenta en 16 minuto(s).'),
      );
    });

    it.each([
      [0, 'Cuenta bloqueada temporalmente. Intenta en 16 minuto(s).'],
      [1, 'Cuenta bloqueada temporalmente. Intenta en 15 minuto(s).'],
      [MINUTE_MS, 'Cuenta bloqueada temporalmente. Intenta en 15 minuto(s).'],
      [MINUTE_MS + 1, 'Cuenta bloqueada temporalmente. Intenta en 14 minuto(s).'],
      [14 * MINUTE_MS, 'Cuenta bloqueada temporalmente. Intenta en 2 minuto(s).'],
      [14 * MINUTE_MS + 1, 'Cuenta bloqueada temporalmente. Intenta en 1 minuto(s).'],
      [FIFTEEN_MINUTES_MS - 1, 'Cuenta bloqueada temporalmente. Intenta en 1 minuto(s).'],
    ])('should answer, %i ms into a 15-minute lockout, with "%s"', async (elapsedMs, message) => {
      const user = await createUser(t, {
        failedLoginAttempts: 5,
        lockoutEnd: at(FIFTEEN_MINUTES_MS),
      });
      t.clock.advance(elapsedMs);

      const res = await login(user.email, DEFAULT_PASSWORD);

      expect(res.status).toBe(401);
      expect(res.json()).toEqual(errorBody(401, message));
      expect(await reloadUser(t, user.id)).toEqual(
        expect.objectContaining({ failedLoginAttempts: 5, lockoutEnd: at(FIFTEEN_MINUTES_MS) }),
      );
    });

    it('should log in with the correct password once the lockout has elapsed, and reset the state', async () => {
      const user = await createUser(t);
      await failLogins(user, 5);
      t.clock.advance(FIFTEEN_MINUTES_MS);

      const res = await login(user.email, DEFAULT_PASSWORD);

      expect(res.status).toBe(200);
      expect(res.json()).toEqual(authResponse(user));
      expect(await reloadUser(t, user.id)).toEqual(
        expect.objectContaining({
          failedLoginAttempts: 0,
          lockoutEnd: null,
          lastLoginAt: at(FIFTEEN_MINUTES_MS),
        }),
      );
    });

    it('should lock again at once on a wrong password after the lockout has elapsed', async () => {
      const user = await createUser(t);
      await failLogins(user, 5);
      t.clock.advance(FIFTEEN_MINUTES_MS + 30 * 1000);
      const mark = t.logger.entries.length;

      const res = await login(user.email, WRONG_PASSWORD);

      expect(res.status).toBe(401);
      expect(res.json()).toEqual(errorBody(401, 'Credenciales inválidas.'));
      expect(await reloadUser(t, user.id)).toEqual(
        expect.objectContaining({
          failedLoginAttempts: 6,
          lockoutEnd: at(FIFTEEN_MINUTES_MS + 30 * 1000 + FIFTEEN_MINUTES_MS),
        }),
      );
      expect(t.logger.entries.slice(mark)).toContainEqual(
        expect.objectContaining({ level: 'warn' }),
      );
      const locked = await login(user.email, DEFAULT_PASSWORD);
      expect(locked.status).toBe(401);
      expect(locked.json()).toEqual(
        errorBody(401, 'Cuenta bloqueada temporalmente. Intenta en 16 minuto(s).'),
      );
    });

    it('should reset the counter on success: 4 failures, a success and 4 failures do not lock', async () => {
      const user = await createUser(t);
      await failLogins(user, 4);
      expect((await login(user.email, DEFAULT_PASSWORD)).status).toBe(200);
      expect((await reloadUser(t, user.id)).failedLoginAttempts).toBe(0);

      await failLogins(user, 4);

      expect(await reloadUser(t, user.id)).toEqual(
        expect.objectContaining({ failedLoginAttempts: 4, lockoutEnd: null }),
      );
      expect((await login(user.email, DEFAULT_PASSWORD)).status).toBe(200);
    });

    it('should not reset the counter with the passage of time', async () => {
      const user = await createUser(t);
      await failLogins(user, 4);
      t.clock.advance(24 * 60 * MINUTE_MS);

      const res = await login(user.email, WRONG_PASSWORD);

      expect(res.status).toBe(401);
      expect(res.json()).toEqual(errorBody(401, 'Credenciales inválidas.'));
      expect(await reloadUser(t, user.id)).toEqual(
        expect.objectContaining({
          failedLoginAttempts: 5,
          lockoutEnd: at(24 * 60 * MINUTE_MS + FIFTEEN_MINUTES_MS),
        }),
      );
    });

    it('should keep a deactivated account deactivated whatever is tried, never counting failures', async () => {
      const user = await createUser(t, { isActive: false });

      for (const password of [...Array<string>(6).fill(WRONG_PASSWORD), DEFAULT_PASSWORD]) {
        const res = await login(user.email, password);

        expect(res.status).toBe(401);
        expect(res.json()).toEqual(errorBody(401, 'Cuenta desactivada.'));
      }
      expect(await reloadUser(t, user.id)).toEqual(
        expect.objectContaining({
          isActive: false,
          failedLoginAttempts: 0,
          lockoutEnd: null,
          lastLoginAt: null,
        }),
      );
    });
  });

  describe('logging', () => {
    it('should log a successful login at information level without any secret', async () => {
      const password = 'L0gin!SuccessSecret';
      const user = await createUser(t, {}, password);
      const mark = t.logger.entries.length;

      const res = await login(user.email, password);

      expect(res.status).toBe(200);
      const json = res.json<AuthBody>();
      const entries = t.logger.entries.slice(mark);
      expect(entries).toContainEqual(
        expect.objectContaining({ level: 'log', text: expect.stringContaining(user.id) }),
      );
      expect(entries.filter((entry) => entry.level !== 'log')).toEqual([]);
      const allText = t.logger.allText();
      expect(allText).not.toContain(password);
      expect(allText).not.toContain(user.passwordHash);
      expect(allText).not.toContain(json.accessToken);
      expect(allText).not.toContain(json.refreshToken);
    });

    it('should log a warning on lockout, and none for earlier failures, without any password', async () => {
      const password = 'L0ckout!CorrectSecret';
      const wrong = 'L0ckout!WrongSecret';
      const user = await createUser(t, {}, password);
      const mark = t.logger.entries.length;
      for (let attempt = 1; attempt <= 4; attempt += 1) {
        expect((await login(user.email, wrong)).status).toBe(401);
      }
      expect(t.logger.entries.slice(mark).filter((entry) => entry.level === 'warn')).toEqual([]);

      expect((await login(user.email, wrong)).status).toBe(401);

      const warnings = t.logger.entries.slice(mark).filter((entry) => entry.level === 'warn');
      expect(warnings).toEqual([
        expect.objectContaining({ text: expect.stringContaining(user.id) }),
      ]);
      const allText = t.logger.allText();
      expect(allText).not.toContain(password);
      expect(allText).not.toContain(wrong);
      expect(allText).not.toContain(user.passwordHash);
    });
  });

  describe('validation', () => {
    const WRONG_TYPES: ReadonlyArray<readonly [string, unknown]> = [
      ['a number', 12345],
      ['null', null],
      ['an array', ['someone@example.com']],
      ['an object', { value: 'someone@example.com' }],
    ];

    interface InvalidLogin {
      readonly name: string;
      readonly body: Record<string, unknown>;
      readonly fields: readonly string[];
    }

    const INVALID_LOGINS: readonly InvalidLogin[] = [
      { name: 'a missing email', body: { password: DEFAULT_PASSWORD }, fields: ['email'] },
      { name: 'a missing password', body: { email: 'someone@example.com' }, fields: ['password'] },
      { name: 'an empty body object', body: {}, fields: ['email', 'password'] },
      ...(['email', 'password'] as const).flatMap((field) =>
        WRONG_TYPES.map(([kind, value]) => ({
          name: `${field} as ${kind}`,
          body: { email: 'someone@example.com', password: DEFAULT_PASSWORD, [field]: value },
          fields: [field],
        })),
      ),
    ];

    it.each(INVALID_LOGINS)(
      'should answer 400 problem details naming the field(s) for $name',
      async ({ body, fields }) => {
        const res = await t.post(LOGIN, body);

        expect(res.status).toBe(400);
        expect(res.json()).toEqual(problemDetails(fields));
      },
    );

    it('should not count an invalid request as a failed login', async () => {
      const user = await createUser(t);

      const res = await t.post(LOGIN, { email: user.email, password: 12345678 });

      expect(res.status).toBe(400);
      expect(res.json()).toEqual(problemDetails(['password']));
      expect(await reloadUser(t, user.id)).toEqual(
        expect.objectContaining({ failedLoginAttempts: 0, lockoutEnd: null }),
      );
    });
  });
});
