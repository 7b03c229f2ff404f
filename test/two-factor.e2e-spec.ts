import { jest } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerUser, reloadUser, type RegisteredUser } from './factories/user.factory.js';
import { auditRows } from './utils/audit-rows.js';
import {
  createTestApp,
  useSharedTestApp,
  type TestApp,
  type TestResponse,
} from './utils/create-test-app.js';
import { errorBody, problemDetails, UNAUTHORIZED_BODY } from './utils/expected-bodies.js';
import { FakeClock } from './utils/fake-clock.js';
import { decodeJwt } from './utils/jwt.js';
import {
  LOGIN,
  REFRESH,
  TOTP_CONFIRM,
  TOTP_DISABLE,
  TOTP_ENROLL,
  TOTP_RECOVERY_CODES,
} from './utils/routes.js';
import {
  createTestDatabase,
  describeOnPostgres,
  type TestDatabase,
} from './utils/test-database.js';
import { runCliOn } from './utils/cli-process.js';

// The TOTP second factor (issue 18), end to end. Codes come from Debian's `oathtool`, an
// implementation independent of the service's, fed the secret the service answered and the
// instant of the injected clock, exactly as an authenticator app would compute them.

const STEP_MS = 30_000;
const MINUTE_MS = 60_000;
/** A step boundary: 2026-01-01T00:00:00Z is a multiple of 30 s. */
const T0 = new Date('2026-01-01T00:00:00.000Z');
const KEY_A = Buffer.alloc(32, 0xa1).toString('base64');
const KEY_B = Buffer.alloc(32, 0xb2).toString('base64');
const WRONG_PASSWORD = 'Wr0ng!Password';

const CODE_REQUIRED = 'Se requiere el código de verificación.';
const INVALID_CODE = 'Código de verificación inválido.';
const INVALID_CREDENTIALS = 'Credenciales inválidas.';
const ALREADY_ENABLED = 'La verificación en dos pasos ya está activada.';
const NOT_PENDING = 'No hay una verificación en dos pasos pendiente de confirmar.';
const NOT_ENABLED = 'La verificación en dos pasos no está activada.';
const DISABLED = 'Verificación en dos pasos desactivada.';
const UNAVAILABLE = 'La verificación en dos pasos no está configurada.';
const RECOVERY_CODE = /^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}$/;

/** What an authenticator app shows at `at` for `secret`: `oathtool --totp -b -N @<seconds>`. */
function oathtool(secret: string, at: Date): string {
  const seconds = Math.floor(at.getTime() / 1000);
  return execFileSync('oathtool', ['--totp', '-b', '-N', `@${seconds}`, secret], {
    encoding: 'utf8',
  }).trim();
}

interface Enabled extends RegisteredUser {
  readonly secret: string;
  readonly recoveryCodes: string[];
}

interface AuthBody {
  readonly accessToken: string;
  readonly refreshToken: string;
}

async function enroll(t: TestApp, user: RegisteredUser): Promise<string> {
  const response = await t.post(TOTP_ENROLL, { password: user.password }, user.accessToken);
  expect(response.status).toBe(200);
  return response.json<{ secret: string }>().secret;
}

/** Registers an account and turns TOTP on at the clock's now. */
async function enabledAccount(t: TestApp): Promise<Enabled> {
  const user = await registerUser(t);
  const secret = await enroll(t, user);
  const response = await t.post(
    TOTP_CONFIRM,
    { code: oathtool(secret, t.clock.now()) },
    user.accessToken,
  );
  expect(response.status).toBe(200);
  return {
    ...user,
    secret,
    recoveryCodes: response.json<{ recoveryCodes: string[] }>().recoveryCodes,
  };
}

function login(t: TestApp, user: RegisteredUser, extra: Record<string, unknown> = {}) {
  return t.post(LOGIN, { email: user.email, password: user.password, ...extra });
}

function amrOf(response: TestResponse): unknown {
  return decodeJwt(response.json<AuthBody>().accessToken).payload.amr;
}

async function failedAttempts(t: TestApp, user: RegisteredUser): Promise<number> {
  return (await reloadUser(t, user.id)).failedLoginAttempts;
}

async function factorRow(
  database: TestDatabase,
  userId: string,
): Promise<{ sealedSecret: string; lastUsedStep: number | null } | undefined> {
  const rows = await database.query<{ sealedSecret: string; lastUsedStep: number | null }>(
    'SELECT "sealedSecret", "lastUsedStep" FROM "totp_factors" WHERE "userId" = $1',
    [userId],
  );
  return rows[0];
}

async function recoveryCodeCount(database: TestDatabase, userId: string): Promise<number> {
  const rows = await database.query<{ n: number | string }>(
    'SELECT COUNT(*) AS "n" FROM "recovery_codes" WHERE "userId" = $1',
    [userId],
  );
  return Number(rows[0].n);
}

describe('two-factor authentication (TOTP)', () => {
  const t = useSharedTestApp(() => ({
    clock: new FakeClock(T0),
    environment: { Mfa__EncryptionKeys: KEY_A },
  }));

  beforeEach(() => {
    t.clock.set(T0);
  });

  describe('enrolment', () => {
    it('should answer a base32 secret, its otpauth URI and a QR code, and change no login yet', async () => {
      const user = await registerUser(t);

      const response = await t.post(TOTP_ENROLL, { password: user.password }, user.accessToken);

      expect(response.status).toBe(200);
      const body = response.json<{ secret: string; otpauthUri: string; qrCode: string }>();
      expect(Object.keys(body).sort()).toEqual(['otpauthUri', 'qrCode', 'secret']);
      expect(body.secret).toMatch(/^[A-Z2-7]{32}$/);
      expect(body.otpauthUri).toBe(
        `otpauth://totp/Keygate:${encodeURIComponent(user.email)}?secret=${body.secret}` +
          '&issuer=Keygate&algorithm=SHA1&digits=6&period=30',
      );
      expect(body.qrCode).toMatch(/^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
      const png = Buffer.from(body.qrCode.split(',')[1], 'base64');
      expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
      // Pending: the password alone still logs in, as the interface says.
      const plain = await login(t, user);
      expect(plain.status).toBe(200);
      expect(amrOf(plain)).toEqual(['pwd']);
    });

    it('should refuse a wrong password as a login does, counting it', async () => {
      const user = await registerUser(t);

      const response = await t.post(TOTP_ENROLL, { password: WRONG_PASSWORD }, user.accessToken);

      expect(response.status).toBe(401);
      expect(response.json()).toEqual(errorBody(401, INVALID_CREDENTIALS));
      expect(await failedAttempts(t, user)).toBe(1);
    });

    it.each([
      [TOTP_ENROLL, { password: 'S3cure!pass' }],
      [TOTP_CONFIRM, { code: '123456' }],
      [TOTP_RECOVERY_CODES, { code: '123456' }],
      [TOTP_DISABLE, { password: 'S3cure!pass', code: '123456' }],
    ])('should refuse %s without an access token', async (path, body) => {
      const response = await t.post(path, body);

      expect(response.status).toBe(401);
      expect(response.json()).toEqual(UNAUTHORIZED_BODY);
    });

    it('should replace a pending secret when enrolling again', async () => {
      const user = await registerUser(t);
      const first = await enroll(t, user);
      const second = await enroll(t, user);

      const stale = await t.post(TOTP_CONFIRM, { code: oathtool(first, T0) }, user.accessToken);
      const fresh = await t.post(TOTP_CONFIRM, { code: oathtool(second, T0) }, user.accessToken);

      expect(second).not.toBe(first);
      expect(stale.json()).toEqual(errorBody(401, INVALID_CODE));
      expect(fresh.status).toBe(200);
    });

    it('should refuse to enrol again while a factor is on', async () => {
      const user = await enabledAccount(t);

      const response = await t.post(TOTP_ENROLL, { password: user.password }, user.accessToken);

      expect(response.status).toBe(409);
      expect(response.json()).toEqual(errorBody(409, ALREADY_ENABLED));
    });

    it('should store the secret encrypted, never as the base32 text', async () => {
      const user = await enabledAccount(t);

      const row = await factorRow(t.database, user.id);

      expect(row?.sealedSecret).toMatch(/^v1\.[0-9a-f]{16}\./);
      expect(row?.sealedSecret).not.toContain(user.secret);
      expect(row?.sealedSecret.toUpperCase()).not.toContain(user.secret);
      expect(t.logger.allText()).not.toContain(user.secret);
    });
  });

  describe('confirmation', () => {
    it('should refuse a wrong code without counting it, then turn the factor on with ten codes', async () => {
      const user = await registerUser(t);
      const secret = await enroll(t, user);
      const wrong = String((Number(oathtool(secret, T0)) + 1) % 1_000_000).padStart(6, '0');

      const refused = await t.post(TOTP_CONFIRM, { code: wrong }, user.accessToken);
      const confirmed = await t.post(
        TOTP_CONFIRM,
        { code: oathtool(secret, T0) },
        user.accessToken,
      );

      expect(refused.status).toBe(401);
      expect(refused.json()).toEqual(errorBody(401, INVALID_CODE));
      expect(await failedAttempts(t, user)).toBe(0);
      expect(confirmed.status).toBe(200);
      const { recoveryCodes } = confirmed.json<{ recoveryCodes: string[] }>();
      expect(Object.keys(confirmed.json<object>())).toEqual(['recoveryCodes']);
      expect(recoveryCodes).toHaveLength(10);
      expect(new Set(recoveryCodes).size).toBe(10);
      for (const code of recoveryCodes) {
        expect(code).toMatch(RECOVERY_CODE);
      }
      expect(await recoveryCodeCount(t.database, user.id)).toBe(10);
      const stored = await t.database.query<{ codeHash: string }>(
        'SELECT "codeHash" FROM "recovery_codes" WHERE "userId" = $1',
        [user.id],
      );
      expect(JSON.stringify(stored)).not.toContain(recoveryCodes[0].slice(0, 5));
    });

    it('should answer 409 when nothing is pending', async () => {
      const fresh = await registerUser(t);
      const enabled = await enabledAccount(t);

      for (const user of [fresh, enabled]) {
        const response = await t.post(TOTP_CONFIRM, { code: '123456' }, user.accessToken);
        expect(response.status).toBe(409);
        expect(response.json()).toEqual(errorBody(409, NOT_PENDING));
      }
    });

    it("should end every other session and keep the caller's", async () => {
      const user = await registerUser(t);
      const other = (await login(t, user)).json<AuthBody>();

      const secret = await enroll(t, user);
      await t.post(TOTP_CONFIRM, { code: oathtool(secret, T0) }, user.accessToken);

      const otherRefresh = await t.post(REFRESH, { refreshToken: other.refreshToken });
      const ownRefresh = await t.post(REFRESH, { refreshToken: user.refreshToken });
      expect(otherRefresh.json()).toEqual(errorBody(401, 'Refresh token revocado.'));
      expect(ownRefresh.status).toBe(200);
    });
  });

  describe('login', () => {
    it('should ask for the code after a right password, moving no counter', async () => {
      const user = await enabledAccount(t);
      await login(t, { ...user, password: WRONG_PASSWORD });
      await login(t, { ...user, password: WRONG_PASSWORD });

      const response = await login(t, user);

      expect(response.status).toBe(401);
      expect(response.json()).toEqual(errorBody(401, CODE_REQUIRED));
      expect(await failedAttempts(t, user)).toBe(2);
      expect((await reloadUser(t, user.id)).lastLoginAt).toBeNull();
    });

    it('should answer a wrong password as the interface does, whatever the code', async () => {
      const user = await enabledAccount(t);
      t.clock.advance(STEP_MS);

      const response = await login(
        t,
        { ...user, password: WRONG_PASSWORD },
        {
          code: oathtool(user.secret, t.clock.now()),
        },
      );

      expect(response.json()).toEqual(errorBody(401, INVALID_CREDENTIALS));
      expect(await failedAttempts(t, user)).toBe(1);
    });

    it('should log in with the code, say so in amr, and keep amr through refresh', async () => {
      const user = await enabledAccount(t);
      t.clock.advance(STEP_MS);

      const response = await login(t, user, { code: oathtool(user.secret, t.clock.now()) });

      expect(response.status).toBe(200);
      expect(amrOf(response)).toEqual(['pwd', 'otp']);
      const refreshed = await t.post(REFRESH, {
        refreshToken: response.json<AuthBody>().refreshToken,
      });
      expect(amrOf(refreshed)).toEqual(['pwd', 'otp']);
      const again = await t.post(REFRESH, {
        refreshToken: refreshed.json<AuthBody>().refreshToken,
      });
      expect(amrOf(again)).toEqual(['pwd', 'otp']);
    });

    it('should ignore a code sent for an account without a factor', async () => {
      const user = await registerUser(t);

      const response = await login(t, user, { code: '000000' });

      expect(response.status).toBe(200);
      expect(amrOf(response)).toEqual(['pwd']);
      const refreshed = await t.post(REFRESH, {
        refreshToken: response.json<AuthBody>().refreshToken,
      });
      expect(amrOf(refreshed)).toEqual(['pwd']);
    });

    // [where the clock is, relative to a step boundary B; whose code is typed, relative to B]
    it.each<[string, number, number, boolean]>([
      ['its own step, at its first instant', 0, 0, true],
      ['its own step, at its last millisecond', STEP_MS - 1, 0, true],
      ['the step before, just after the boundary', 0, -STEP_MS, true],
      ['the step before, at the end of this step', STEP_MS - 1, -STEP_MS, true],
      ['the step after (a fast phone)', 0, STEP_MS, true],
      ['two steps before', 0, -2 * STEP_MS, false],
      ['two steps after', 0, 2 * STEP_MS, false],
      ['the step before last, a millisecond past the window', STEP_MS, -STEP_MS, false],
    ])(
      'a code of %s (clock at B + %d ms, code of B + %d ms) is accepted: %s',
      async (_case, at, of, ok) => {
        const boundary = new Date(T0.getTime() + 10 * MINUTE_MS);
        const user = await enabledAccount(t);
        t.clock.set(new Date(boundary.getTime() + at));

        const response = await login(t, user, {
          code: oathtool(user.secret, new Date(boundary.getTime() + of)),
        });

        if (ok) {
          expect(response.status).toBe(200);
          expect(await failedAttempts(t, user)).toBe(0);
        } else {
          expect(response.json()).toEqual(errorBody(401, INVALID_CODE));
          expect(await failedAttempts(t, user)).toBe(1);
        }
      },
    );

    it('should accept each code once: a replay is a failed login', async () => {
      const user = await enabledAccount(t);
      t.clock.advance(STEP_MS);
      const code = oathtool(user.secret, t.clock.now());

      const first = await login(t, user, { code });
      const replay = await login(t, user, { code });
      t.clock.advance(STEP_MS);
      const replayInNextStep = await login(t, user, { code });

      expect(first.status).toBe(200);
      expect(replay.json()).toEqual(errorBody(401, INVALID_CODE));
      expect(replayInNextStep.json()).toEqual(errorBody(401, INVALID_CODE));
      expect(await failedAttempts(t, user)).toBe(2);
    });

    it('should refuse the code that confirmed the factor', async () => {
      const user = await enabledAccount(t);

      const response = await login(t, user, { code: oathtool(user.secret, T0) });

      expect(response.json()).toEqual(errorBody(401, INVALID_CODE));
    });

    it('should refuse an older step once a newer one was used', async () => {
      const user = await enabledAccount(t);
      t.clock.advance(2 * STEP_MS);
      const newer = await login(t, user, { code: oathtool(user.secret, t.clock.now()) });

      const older = await login(t, user, {
        code: oathtool(user.secret, new Date(t.clock.now().getTime() - STEP_MS)),
      });

      expect(newer.status).toBe(200);
      expect(older.json()).toEqual(errorBody(401, INVALID_CODE));
    });

    it.each([
      [
        'digits that are not the code',
        (code: string) => String((Number(code) + 500_000) % 1_000_000).padStart(6, '0'),
      ],
      ['five digits', (code: string) => code.slice(0, 5)],
      ['a word', () => 'letmein'],
    ])('should refuse %s and count it', async (_case, wrong) => {
      const user = await enabledAccount(t);
      t.clock.advance(STEP_MS);

      const response = await login(t, user, { code: wrong(oathtool(user.secret, t.clock.now())) });

      expect(response.status).toBe(401);
      expect(response.json()).toEqual(errorBody(401, INVALID_CODE));
      expect(await failedAttempts(t, user)).toBe(1);
    });

    it('should lock the account out after five wrong codes, as after five wrong passwords', async () => {
      const user = await enabledAccount(t);
      t.clock.advance(STEP_MS);
      const answers: unknown[] = [];
      for (let attempt = 0; attempt < 5; attempt += 1) {
        answers.push((await login(t, user, { code: '000000' })).json());
      }

      const right = await login(t, user, { code: oathtool(user.secret, t.clock.now()) });

      expect(answers).toEqual(Array.from({ length: 5 }, () => errorBody(401, INVALID_CODE)));
      expect(right.json()).toEqual(
        errorBody(401, 'Cuenta bloqueada temporalmente. Intenta en 16 minuto(s).'),
      );
      const stored = await reloadUser(t, user.id);
      expect(stored.failedLoginAttempts).toBe(5);
      expect(stored.lockoutEnd).toEqual(new Date(t.clock.now().getTime() + 15 * MINUTE_MS));
    });

    it('should count wrong passwords and wrong codes together', async () => {
      const user = await enabledAccount(t);
      t.clock.advance(STEP_MS);
      for (let attempt = 0; attempt < 2; attempt += 1) {
        await login(t, { ...user, password: WRONG_PASSWORD });
        await login(t, user, { code: '000000' });
      }

      const fifth = await login(t, { ...user, password: WRONG_PASSWORD });
      const after = await login(t, user, { code: oathtool(user.secret, t.clock.now()) });

      expect(fifth.json()).toEqual(errorBody(401, INVALID_CREDENTIALS));
      expect(after.json()).toEqual(
        errorBody(401, 'Cuenta bloqueada temporalmente. Intenta en 16 minuto(s).'),
      );
    });

    it('should reset the counter on a login with a right code', async () => {
      const user = await enabledAccount(t);
      t.clock.advance(STEP_MS);
      await login(t, user, { code: '000000' });

      await login(t, user, { code: oathtool(user.secret, t.clock.now()) });

      expect(await failedAttempts(t, user)).toBe(0);
    });

    it('should let exactly one of parallel logins with one code in', async () => {
      const user = await enabledAccount(t);
      t.clock.advance(STEP_MS);
      const code = oathtool(user.secret, t.clock.now());

      const responses = await Promise.all(
        Array.from({ length: 5 }, () => login(t, user, { code })),
      );

      expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
      expect(
        responses.filter((r) => r.status !== 200).map((r) => r.json<{ message: string }>().message),
      ).toEqual(Array.from({ length: 4 }, () => INVALID_CODE));
    });

    it.each([
      ['a number', 123456],
      ['an empty text', ''],
      ['a text of 33 characters', '1'.repeat(33)],
    ])('should refuse a code that is %s with problem details', async (_case, code) => {
      const user = await registerUser(t);

      const response = await login(t, user, { code });

      expect(response.status).toBe(400);
      expect(response.json()).toEqual(problemDetails(['code']));
    });
  });

  it('should take a null code as no code, as for every optional field', async () => {
    const plain = await registerUser(t);
    const enabled = await enabledAccount(t);

    expect((await login(t, plain, { code: null })).status).toBe(200);
    expect((await login(t, enabled, { code: null })).json()).toEqual(errorBody(401, CODE_REQUIRED));
  });

  describe('recovery codes', () => {
    it('should log in with a recovery code once, in any case and with or without its hyphen', async () => {
      const user = await enabledAccount(t);
      const [first, second, third] = user.recoveryCodes;

      const used = await login(t, user, { code: first });
      const reused = await login(t, user, { code: first });
      const shouted = await login(t, user, { code: second.toUpperCase() });
      const joined = await login(t, user, { code: ` ${third.replace('-', '')} ` });

      expect(used.status).toBe(200);
      expect(amrOf(used)).toEqual(['pwd', 'otp']);
      expect(reused.json()).toEqual(errorBody(401, INVALID_CODE));
      expect(shouted.status).toBe(200);
      expect(joined.status).toBe(200);
      expect(await recoveryCodeCount(t.database, user.id)).toBe(7);
    });

    it("should refuse another account's recovery code", async () => {
      const alice = await enabledAccount(t);
      const bob = await enabledAccount(t);

      const response = await login(t, alice, { code: bob.recoveryCodes[0] });

      expect(response.json()).toEqual(errorBody(401, INVALID_CODE));
    });

    it('should replace them for a code: the old ones stop working, the new ones work', async () => {
      const user = await enabledAccount(t);
      t.clock.advance(STEP_MS);

      const response = await t.post(
        TOTP_RECOVERY_CODES,
        { code: oathtool(user.secret, t.clock.now()) },
        user.accessToken,
      );

      expect(response.status).toBe(200);
      const { recoveryCodes } = response.json<{ recoveryCodes: string[] }>();
      expect(recoveryCodes).toHaveLength(10);
      expect(recoveryCodes.filter((c) => user.recoveryCodes.includes(c))).toEqual([]);
      expect((await login(t, user, { code: user.recoveryCodes[1] })).status).toBe(401);
      expect((await login(t, user, { code: recoveryCodes[1] })).status).toBe(200);
    });

    it('should count a wrong code at replacement toward the lockout', async () => {
      const user = await enabledAccount(t);

      const response = await t.post(TOTP_RECOVERY_CODES, { code: '000000' }, user.accessToken);

      expect(response.json()).toEqual(errorBody(401, INVALID_CODE));
      expect(await failedAttempts(t, user)).toBe(1);
    });

    it('should answer 409 to an account without a factor', async () => {
      const user = await registerUser(t);

      const response = await t.post(TOTP_RECOVERY_CODES, { code: '123456' }, user.accessToken);

      expect(response.json()).toEqual(errorBody(409, NOT_ENABLED));
    });
  });

  describe('turning it off', () => {
    it('should need the password and a code, then log in with the password alone', async () => {
      const user = await enabledAccount(t);
      t.clock.advance(STEP_MS);
      const code = oathtool(user.secret, t.clock.now());

      const wrongPassword = await t.post(
        TOTP_DISABLE,
        { password: WRONG_PASSWORD, code },
        user.accessToken,
      );
      const wrongCode = await t.post(
        TOTP_DISABLE,
        { password: user.password, code: '000000' },
        user.accessToken,
      );
      const done = await t.post(TOTP_DISABLE, { password: user.password, code }, user.accessToken);

      expect(wrongPassword.json()).toEqual(errorBody(401, INVALID_CREDENTIALS));
      expect(wrongCode.json()).toEqual(errorBody(401, INVALID_CODE));
      expect(done.status).toBe(200);
      expect(done.json()).toEqual({ message: DISABLED });
      expect(await factorRow(t.database, user.id)).toBeUndefined();
      expect(await recoveryCodeCount(t.database, user.id)).toBe(0);
      const plain = await login(t, user);
      expect(plain.status).toBe(200);
      expect(amrOf(plain)).toEqual(['pwd']);
      // Sessions continue: the caller's own refresh token still works.
      expect((await t.post(REFRESH, { refreshToken: user.refreshToken })).status).toBe(200);
    });

    it('should take a recovery code', async () => {
      const user = await enabledAccount(t);

      const response = await t.post(
        TOTP_DISABLE,
        { password: user.password, code: user.recoveryCodes[0] },
        user.accessToken,
      );

      expect(response.json()).toEqual({ message: DISABLED });
    });

    it('should answer 409 to an account without a factor', async () => {
      const user = await registerUser(t);

      const response = await t.post(
        TOTP_DISABLE,
        { password: user.password, code: '123456' },
        user.accessToken,
      );

      expect(response.json()).toEqual(errorBody(409, NOT_ENABLED));
    });
  });

  it('should record the whole story in the audit trail, without a code or secret', async () => {
    const user = await enabledAccount(t);
    t.clock.advance(STEP_MS);
    await login(t, user);
    await login(t, user, { code: '000000' });
    await login(t, user, { code: user.recoveryCodes[0] });
    t.clock.advance(STEP_MS);
    await t.post(
      TOTP_RECOVERY_CODES,
      { code: oathtool(user.secret, t.clock.now()) },
      user.accessToken,
    );
    t.clock.advance(STEP_MS);
    await t.post(
      TOTP_DISABLE,
      { password: user.password, code: oathtool(user.secret, t.clock.now()) },
      user.accessToken,
    );

    const rows = await auditRows(t.database, user.id);

    expect(rows.map((row) => [row.type, row.details])).toEqual([
      ['registered', expect.any(Object)],
      ['totp_enrollment_started', {}],
      ['totp_enabled', { keptFamilyId: expect.any(String), endedSessionIds: [] }],
      ['login_failed', { reason: 'mfa_required' }],
      ['login_failed', { reason: 'bad_mfa_code' }],
      ['totp_recovery_code_used', {}],
      ['login_succeeded', expect.any(Object)],
      ['totp_recovery_codes_replaced', {}],
      ['totp_disabled', {}],
    ]);
    const text = JSON.stringify(rows);
    expect(text).not.toContain(user.secret);
    expect(text).not.toContain(user.recoveryCodes[0]);
  });
});

describe('two-factor authentication without Mfa__EncryptionKeys', () => {
  it('should answer 503 where a key is needed, log it once, and leave other logins alone', async () => {
    const database = await createTestDatabase();
    const keyed = await createTestApp({
      database,
      clock: new FakeClock(T0),
      environment: { Mfa__EncryptionKeys: KEY_A },
    });
    let user: Enabled;
    try {
      user = await enabledAccount(keyed);
    } finally {
      await keyed.close();
    }
    const t = await createTestApp({
      database,
      clock: new FakeClock(new Date(T0.getTime() + STEP_MS)),
    });
    try {
      const plain = await registerUser(t);
      const enrolment = await t.post(TOTP_ENROLL, { password: plain.password }, plain.accessToken);
      const factorLogin = await login(t, user, { code: oathtool(user.secret, t.clock.now()) });
      const plainLogin = await login(t, plain);

      expect(enrolment.json()).toEqual(errorBody(503, UNAVAILABLE));
      expect(factorLogin.json()).toEqual(errorBody(503, UNAVAILABLE));
      expect(plainLogin.status).toBe(200);
      const reports = t.logger.entries.filter((entry) =>
        entry.text.includes('Mfa__EncryptionKeys, which is not configured'),
      );
      expect(reports).toHaveLength(1);
    } finally {
      await t.close();
      await database.drop();
    }
  });
});

describe('rolling Mfa__EncryptionKeys', () => {
  it('should open secrets sealed with an older key still listed, and re-seal them with the first', async () => {
    const database = await createTestDatabase();
    const clock = new FakeClock(T0);
    const withKeys = (keys: string) =>
      createTestApp({ database, clock, environment: { Mfa__EncryptionKeys: keys } });
    let user: Enabled;
    const first = await withKeys(KEY_A);
    try {
      user = await enabledAccount(first);
    } finally {
      await first.close();
    }
    const sealedWithA = (await factorRow(database, user.id))?.sealedSecret;

    const onlyB = await withKeys(KEY_B);
    clock.advance(STEP_MS);
    try {
      const refused = await login(onlyB, user, { code: oathtool(user.secret, clock.now()) });
      expect(refused.json()).toEqual(errorBody(503, UNAVAILABLE));
    } finally {
      await onlyB.close();
    }

    const rolled = await withKeys(`${KEY_B},${KEY_A}`);
    try {
      const response = await login(rolled, user, { code: oathtool(user.secret, clock.now()) });
      expect(response.status).toBe(200);
    } finally {
      await rolled.close();
    }
    const resealed = (await factorRow(database, user.id))?.sealedSecret;
    expect(resealed).not.toBe(sealedWithA);
    expect(resealed?.split('.')[1]).not.toBe(sealedWithA?.split('.')[1]);

    const retired = await withKeys(KEY_B);
    clock.advance(STEP_MS);
    try {
      const response = await login(retired, user, { code: oathtool(user.secret, clock.now()) });
      expect(response.status).toBe(200);
    } finally {
      await retired.close();
      await database.drop();
    }
  });
});

describeOnPostgres('two-factor authentication on two instances', () => {
  it('should let exactly one of parallel logins with one code in, across both', async () => {
    const database = await createTestDatabase();
    const clock = new FakeClock(T0);
    const environment = { Mfa__EncryptionKeys: KEY_A };
    const a = await createTestApp({ database, clock, environment });
    const b = await createTestApp({ database, clock, environment });
    try {
      const user = await enabledAccount(a);
      clock.advance(STEP_MS);
      const code = oathtool(user.secret, clock.now());

      const responses = await Promise.all(
        Array.from({ length: 6 }, (_, i) => login(i % 2 === 0 ? a : b, user, { code })),
      );

      expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
      expect(
        responses.filter((r) => r.status !== 200).map((r) => r.json<{ message: string }>().message),
      ).toEqual(Array.from({ length: 5 }, () => INVALID_CODE));
      expect((await factorRow(database, user.id))?.lastUsedStep).toBe(
        Math.floor(clock.now().getTime() / STEP_MS),
      );
    } finally {
      await a.close();
      await b.close();
      await database.drop();
    }
  });

  it('should spend a recovery code once across both', async () => {
    const database = await createTestDatabase();
    const clock = new FakeClock(T0);
    const environment = { Mfa__EncryptionKeys: KEY_A };
    const a = await createTestApp({ database, clock, environment });
    const b = await createTestApp({ database, clock, environment });
    try {
      const user = await enabledAccount(a);

      const responses = await Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          login(i % 2 === 0 ? a : b, user, { code: user.recoveryCodes[0] }),
        ),
      );

      expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
    } finally {
      await a.close();
      await b.close();
      await database.drop();
    }
  });
});

// The admin CLI spawns its own process on the real clock: the database is shared with the app.
describe('users:mfa-reset', () => {
  jest.setTimeout(60_000);
  const t = useSharedTestApp(() => ({
    clock: new FakeClock(new Date()),
    environment: { Mfa__EncryptionKeys: KEY_A },
  }));

  it('should remove a lost factor so the password alone logs in, and record it', async () => {
    const user = await enabledAccount(t);
    const cwd = mkdtempSync(join(tmpdir(), 'keygate-cli-'));
    try {
      const result = await runCliOn(t.database, ['users:mfa-reset', user.email], cwd);
      const again = await runCliOn(t.database, ['users:mfa-reset', user.email], cwd);

      expect(result).toEqual({
        code: 0,
        stdout:
          `Removed the second factor and recovery codes of ${user.email} (user ${user.id}); it ` +
          'logs in with the password alone until it enrols again.\n',
        stderr: '',
      });
      expect(again.stdout).toBe(
        `${user.email} (user ${user.id}) had no second factor to remove.\n`,
      );
      const response = await login(t, user);
      expect(response.status).toBe(200);
      expect(amrOf(response)).toEqual(['pwd']);
      const rows = await auditRows(t.database, user.id);
      expect(rows.filter((row) => row.type === 'admin_totp_reset').map((r) => r.details)).toEqual([
        { changed: true },
        { changed: false },
      ]);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
