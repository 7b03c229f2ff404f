import fc from 'fast-check';
import { createHash, createHmac } from 'node:crypto';
import { MailSender } from '../src/mail/mail-sender.js';
import { createUser, registerUser, reloadUser } from './factories/user.factory.js';
import { auditRows } from './utils/audit-rows.js';
import { type TestApp, type TestResponse, useSharedTestApp } from './utils/create-test-app.js';
import { authResponse, errorBody, problemDetails } from './utils/expected-bodies.js';
import { FakeClock } from './utils/fake-clock.js';
import { decodeJwt } from './utils/jwt.js';
import {
  EMAIL_CODE_LOGIN,
  EMAIL_CODE_SEND,
  LOGIN,
  REFRESH,
  TOTP_CONFIRM,
  TOTP_ENROLL,
} from './utils/routes.js';
import { tokenOf, useSmtpSink, type ReceivedMail, type SmtpSink } from './utils/smtp-sink.js';
import { holdSendersStill, recordUnitsOfWork } from './utils/units-of-work.js';

// Sign-in with a mailed code (issue 27), as a person goes through it: the service mails a real
// SMTP server (smtp-server), the test reads the mail (mailparser) and types the code, or opens
// the link the way the front end's page would and posts its token.

const SECOND_MS = 1000;
const MINUTE_MS = 60 * SECOND_MS;
/** A TOTP step boundary, so the codes the test computes are the service's. */
const T0 = new Date('2026-01-01T00:00:00.000Z');
const LINK_PAGE = 'https://app.example.com/sign-in/email-code?token={token}';
const MFA_KEY = Buffer.alloc(32, 0x27).toString('base64');

const REQUESTED = 'Si existe una cuenta con ese email, recibirás un código para iniciar sesión.';
const INVALID_CODE = 'Código inválido o expirado.';
const DISABLED = 'El inicio de sesión con código por email no está activado.';

/** The environment of an app with the feature on, mailing `sink`; three tries per code. */
function emailCodeEnvironment(sink: Pick<SmtpSink, 'url'>): Record<string, string> {
  return {
    Smtp__Url: sink.url,
    Smtp__From: 'Keygate <no-reply@keygate.test>',
    Mail__ResetPasswordUrl: 'https://app.example.com/reset-password?token={token}',
    Mail__VerifyEmailUrl: 'https://app.example.com/verify-email?token={token}',
    EmailCode__Enabled: 'true',
    EmailCode__LinkUrl: LINK_PAGE,
    EmailCode__MaxAttempts: '3',
    Mfa__EncryptionKeys: MFA_KEY,
  };
}

interface AuthBody {
  readonly accessToken: string;
  readonly refreshToken: string;
}

/** The code a person reads in the mail: the line of digits alone. */
function codeOf(mail: ReceivedMail): string {
  const code = /^(\d{6})$/m.exec(mail.text)?.[1];
  if (code === undefined) {
    throw new Error(`no code in the mail: ${mail.text}`);
  }
  return code;
}

/** Asks for a code for `email` and returns the `count`-th mail to it. */
async function mailedCode(
  t: TestApp,
  sink: SmtpSink,
  email: string,
  count = 1,
): Promise<ReceivedMail> {
  const res = await t.post(EMAIL_CODE_SEND, { email });
  expect(res.status).toBe(202);
  return (await sink.waitFor(email, count))[count - 1];
}

/** Waits until the sender has nothing left to do that is due now. */
async function mailSettled(t: TestApp): Promise<void> {
  const sender = t.app.get(MailSender);
  sender.wake();
  await sender.idle();
}

function amrOf(response: TestResponse): unknown {
  return decodeJwt(response.json<AuthBody>().accessToken).payload.amr;
}

/** RFC 6238 at `at` for a base32 secret, written here apart from the service's own code. */
function totp(secret: string, at: Date): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const char of secret.replace(/=+$/, '').toUpperCase()) {
    bits += alphabet.indexOf(char).toString(2).padStart(5, '0');
  }
  const key = Buffer.from(bits.match(/.{8}/g)?.map((byte) => parseInt(byte, 2)) ?? []);
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(at.getTime() / 30_000)));
  const mac = createHmac('sha1', key).update(counter).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

describe('sign-in with a mailed code, through a real SMTP server', () => {
  const sink = useSmtpSink();
  const t = useSharedTestApp(() => ({
    environment: emailCodeEnvironment(sink),
    clock: new FakeClock(T0),
  }));

  it('should answer every address alike, and mail a code and a link only to an account', async () => {
    const user = await createUser(t);
    const unknown = `nobody-${user.id}@example.com`;

    const known = await t.post(EMAIL_CODE_SEND, { email: user.email.toUpperCase() });
    const absent = await t.post(EMAIL_CODE_SEND, { email: unknown });

    expect([known.status, absent.status]).toEqual([202, 202]);
    expect([known.json(), absent.json()]).toEqual([{ message: REQUESTED }, { message: REQUESTED }]);
    const [mail] = await sink.waitFor(user.email);
    await mailSettled(t);
    expect(sink.to(unknown)).toEqual([]);
    expect(mail.subject).toBe('Tu código para iniciar sesión');
    expect(mail.text).toContain(`Hola, ${user.username}:`);
    expect(mail.text).toContain('antes de 10 minutos');
    expect(codeOf(mail)).toMatch(/^\d{6}$/);
    expect(mail.html).toContain(`<strong>${codeOf(mail)}</strong>`);
    expect(mail.link).toMatch(
      /^https:\/\/app\.example\.com\/sign-in\/email-code\?token=[\w-]{43}$/,
    );
  });

  it('should sign in once with the code, as login answers, with amr "email"', async () => {
    const user = await createUser(t);
    const mail = await mailedCode(t, sink, user.email);

    const res = await t.post(EMAIL_CODE_LOGIN, { email: user.email, code: codeOf(mail) });

    expect(res.status).toBe(200);
    expect(res.json()).toEqual(authResponse(user));
    expect(amrOf(res)).toEqual(['email']);
    // The session is an ordinary one: its refresh token rotates, keeping how it began.
    const refreshed = await t.post(REFRESH, { refreshToken: res.json<AuthBody>().refreshToken });
    expect(refreshed.status).toBe(200);
    expect(amrOf(refreshed)).toEqual(['email']);
    expect((await reloadUser(t, user.id)).lastLoginAt).toEqual(t.clock.now());

    const again = await t.post(EMAIL_CODE_LOGIN, { email: user.email, code: codeOf(mail) });
    expect(again.status).toBe(401);
    expect(again.json()).toEqual(errorBody(401, INVALID_CODE));
    const link = await t.post(EMAIL_CODE_LOGIN, { token: tokenOf(mail.link) });
    expect(link.json()).toEqual(errorBody(401, INVALID_CODE));

    // The mail's own rows (mail_sent) land whenever the sender gets there: left out.
    const rows = (await auditRows(t.database, user.id)).filter((row) => !/^mail_/.test(row.type));
    expect(rows.map((row) => [row.type, row.details])).toEqual([
      ['email_code_requested', {}],
      ['email_code_login_succeeded', { familyId: expect.any(String) }],
      ['email_verified', {}],
      ['token_refreshed', expect.any(Object)],
      ['email_code_login_failed', { reason: 'invalid' }],
    ]);
  });

  it("should sign in once with the link's token, which the code then cannot", async () => {
    const user = await createUser(t);
    const mail = await mailedCode(t, sink, user.email);

    const res = await t.post(EMAIL_CODE_LOGIN, { token: tokenOf(mail.link) });

    expect(res.status).toBe(200);
    expect(res.json()).toEqual(authResponse(user));
    expect(amrOf(res)).toEqual(['email']);
    const code = await t.post(EMAIL_CODE_LOGIN, { email: user.email, code: codeOf(mail) });
    expect(code.json()).toEqual(errorBody(401, INVALID_CODE));
    const again = await t.post(EMAIL_CODE_LOGIN, { token: tokenOf(mail.link) });
    expect(again.json()).toEqual(errorBody(401, INVALID_CODE));
  });

  it('should end a code at its third wrong try, counting each as a failed login', async () => {
    const user = await createUser(t);
    const mail = await mailedCode(t, sink, user.email);
    const wrong = codeOf(mail) === '000000' ? '000001' : '000000';

    for (let attempt = 1; attempt <= 3; attempt += 1) {
      const res = await t.post(EMAIL_CODE_LOGIN, { email: user.email, code: wrong });
      expect([res.status, res.json()]).toEqual([401, errorBody(401, INVALID_CODE)]);
      expect((await reloadUser(t, user.id)).failedLoginAttempts).toBe(attempt);
    }
    const right = await t.post(EMAIL_CODE_LOGIN, { email: user.email, code: codeOf(mail) });
    const link = await t.post(EMAIL_CODE_LOGIN, { token: tokenOf(mail.link) });

    expect(right.json()).toEqual(errorBody(401, INVALID_CODE));
    expect(link.json()).toEqual(errorBody(401, INVALID_CODE));
    // Nothing was left to guess: the refusals after the end did not count.
    expect((await reloadUser(t, user.id)).failedLoginAttempts).toBe(3);
    const reasons = (await auditRows(t.database, user.id))
      .filter((row) => row.type === 'email_code_login_failed')
      .map((row) => row.details.reason);
    // The link's refusal names no account: its token is unknown once the code has ended.
    expect(reasons).toEqual(['bad_code', 'bad_code', 'exhausted', 'invalid']);
  });

  it('should lock the account at the fifth wrong code of any codes, and then refuse the right one', async () => {
    const user = await createUser(t);
    const first = await mailedCode(t, sink, user.email);
    const wrongOf = (mail: ReceivedMail) => (codeOf(mail) === '000000' ? '000001' : '000000');
    for (let attempt = 0; attempt < 3; attempt += 1) {
      await t.post(EMAIL_CODE_LOGIN, { email: user.email, code: wrongOf(first) });
    }
    t.clock.advance(61 * SECOND_MS);
    const second = await mailedCode(t, sink, user.email, 2);

    await t.post(EMAIL_CODE_LOGIN, { email: user.email, code: wrongOf(second) });
    const fifth = await t.post(EMAIL_CODE_LOGIN, { email: user.email, code: wrongOf(second) });
    const right = await t.post(EMAIL_CODE_LOGIN, { email: user.email, code: codeOf(second) });
    const password = await t.post(LOGIN, { email: user.email, password: 'S3cure!pass' });

    expect(fifth.json()).toEqual(errorBody(401, INVALID_CODE));
    // SPEC §4.2: the whole minutes left, rounded down, plus one.
    const locked = 'Cuenta bloqueada temporalmente. Intenta en 16 minuto(s).';
    expect([right.status, right.json()]).toEqual([401, errorBody(401, locked)]);
    expect(password.json()).toEqual(errorBody(401, locked));
    expect((await reloadUser(t, user.id)).failedLoginAttempts).toBe(5);
    const types = (await auditRows(t.database, user.id)).map((row) => row.type);
    expect(types).toContain('lockout_started');
  });

  it('should sign in after the lockout with a live code, and reset the counter as a login does', async () => {
    const user = await createUser(t, {
      failedLoginAttempts: 5,
      lockoutEnd: new Date(t.clock.now().getTime() + 5 * MINUTE_MS),
    });
    const mail = await mailedCode(t, sink, user.email);

    const locked = await t.post(EMAIL_CODE_LOGIN, { email: user.email, code: codeOf(mail) });
    t.clock.advance(5 * MINUTE_MS);
    const after = await t.post(EMAIL_CODE_LOGIN, { email: user.email, code: codeOf(mail) });

    expect(locked.json()).toEqual(
      errorBody(401, 'Cuenta bloqueada temporalmente. Intenta en 6 minuto(s).'),
    );
    expect(after.status).toBe(200);
    const reloaded = await reloadUser(t, user.id);
    expect([reloaded.failedLoginAttempts, reloaded.lockoutEnd]).toEqual([0, null]);
  });

  it('should mail nothing to a deactivated account, and refuse a code mailed before it was deactivated', async () => {
    const inactive = await createUser(t, { isActive: false });
    await t.post(EMAIL_CODE_SEND, { email: inactive.email });
    const user = await createUser(t);
    const mail = await mailedCode(t, sink, user.email);
    await mailSettled(t);
    await t.database.query('UPDATE users SET "isActive" = FALSE WHERE id = $1', [user.id]);

    const res = await t.post(EMAIL_CODE_LOGIN, { email: user.email, code: codeOf(mail) });

    expect(sink.to(inactive.email)).toEqual([]);
    expect([res.status, res.json()]).toEqual([401, errorBody(401, 'Cuenta desactivada.')]);
  });

  it('should refuse a code after its ten minutes', async () => {
    const user = await createUser(t);
    const mail = await mailedCode(t, sink, user.email);

    t.clock.advance(10 * MINUTE_MS);
    const code = await t.post(EMAIL_CODE_LOGIN, { email: user.email, code: codeOf(mail) });
    const link = await t.post(EMAIL_CODE_LOGIN, { token: tokenOf(mail.link) });

    expect(code.json()).toEqual(errorBody(401, INVALID_CODE));
    expect(link.json()).toEqual(errorBody(401, INVALID_CODE));
    expect((await reloadUser(t, user.id)).failedLoginAttempts).toBe(0);
  });

  it('should send one mail inside the minimum interval, and a code that replaces the first after it', async () => {
    const user = await createUser(t);
    const first = await mailedCode(t, sink, user.email);
    await t.post(EMAIL_CODE_SEND, { email: user.email });
    await mailSettled(t);
    expect(sink.to(user.email)).toHaveLength(1);

    t.clock.advance(61 * SECOND_MS);
    const second = await mailedCode(t, sink, user.email, 2);

    const old = await t.post(EMAIL_CODE_LOGIN, { token: tokenOf(first.link) });
    expect(old.json()).toEqual(errorBody(401, INVALID_CODE));
    const fresh = await t.post(EMAIL_CODE_LOGIN, { email: user.email, code: codeOf(second) });
    expect(fresh.status).toBe(200);
  });

  it('should refuse an unknown address and an unknown link alike, counting nothing', async () => {
    const user = await createUser(t);

    const noCode = await t.post(EMAIL_CODE_LOGIN, { email: user.email, code: '123456' });
    const noAccount = await t.post(EMAIL_CODE_LOGIN, {
      email: `nobody-${user.id}@example.com`,
      code: '123456',
    });
    const noLink = await t.post(EMAIL_CODE_LOGIN, { token: 'x'.repeat(43) });

    for (const res of [noCode, noAccount, noLink]) {
      expect([res.status, res.json()]).toEqual([401, errorBody(401, INVALID_CODE)]);
    }
    expect((await reloadUser(t, user.id)).failedLoginAttempts).toBe(0);
  });

  it('should verify the address it reached', async () => {
    const user = await registerUser(t);
    await sink.waitFor(user.email);
    t.clock.advance(61 * SECOND_MS);
    const mail = await mailedCode(t, sink, user.email, 2);

    const res = await t.post(EMAIL_CODE_LOGIN, { email: user.email, code: codeOf(mail) });

    expect(res.status).toBe(200);
    expect(decodeJwt(res.json<AuthBody>().accessToken).payload.email_verified).toBe(true);
    expect((await reloadUser(t, user.id)).emailVerifiedAt).toEqual(t.clock.now());
    const types = (await auditRows(t.database, user.id)).map((row) => row.type);
    expect(types.slice(-2)).toEqual(['email_code_login_succeeded', 'email_verified']);
  });

  it('should keep only digests of the code and the token, and the mail only sealed', async () => {
    const user = await createUser(t);
    let outboxWhileSending = '';
    sink.beforeAnswer = async () => {
      sink.beforeAnswer = null;
      outboxWhileSending = JSON.stringify(
        await t.database.query('SELECT * FROM mail_outbox WHERE "userId" = $1', [user.id]),
      );
    };
    const mail = await mailedCode(t, sink, user.email);
    const code = codeOf(mail);
    const token = tokenOf(mail.link);

    const [row] = await t.database.query<Record<string, unknown>>(
      'SELECT * FROM email_codes WHERE "userId" = $1',
      [user.id],
    );
    const stored = JSON.stringify(row);
    expect(row?.tokenHash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(row?.codeHash).toMatch(/^[0-9a-f]{64}$/);
    expect(row?.codeHash).not.toBe(createHash('sha256').update(code).digest('hex'));
    for (const text of [stored, outboxWhileSending]) {
      expect(text).not.toContain(token);
      expect(text).not.toMatch(new RegExp(`\\b${code}\\b`));
    }
    expect(outboxWhileSending).toContain('"kind":"email_code"');
    // Signing in with both leaves neither in a log line.
    expect((await t.post(EMAIL_CODE_LOGIN, { email: user.email, code })).status).toBe(200);
    expect((await t.post(EMAIL_CODE_LOGIN, { token })).status).toBe(401);
    expect(t.logger.allText()).toContain('signed in with a mailed code');
    for (const logged of [t.logs.text(), t.logger.allText()]) {
      expect(logged).not.toContain(token);
      expect(logged).not.toMatch(new RegExp(`\\b${code}\\b`));
    }
  });

  it('should need the second factor of an account that has one, and keep the mailed code until then', async () => {
    const user = await registerUser(t);
    const enrolled = await t.post(TOTP_ENROLL, { password: user.password }, user.accessToken);
    const secret = enrolled.json<{ secret: string }>().secret;
    const confirmed = await t.post(
      TOTP_CONFIRM,
      { code: totp(secret, t.clock.now()) },
      user.accessToken,
    );
    expect(confirmed.status).toBe(200);
    t.clock.advance(61 * SECOND_MS);
    const mail = await mailedCode(t, sink, user.email, 2);
    const body = { email: user.email, code: codeOf(mail) };

    const without = await t.post(EMAIL_CODE_LOGIN, body);
    const wrong = await t.post(EMAIL_CODE_LOGIN, { ...body, secondFactorCode: '000000' });
    const right = await t.post(EMAIL_CODE_LOGIN, {
      ...body,
      secondFactorCode: totp(secret, t.clock.now()),
    });

    expect(without.json()).toEqual(errorBody(401, 'Se requiere el código de verificación.'));
    expect(wrong.json()).toEqual(errorBody(401, 'Código de verificación inválido.'));
    expect(right.status).toBe(200);
    expect(amrOf(right)).toEqual(['email', 'otp']);
    const reasons = (await auditRows(t.database, user.id))
      .filter((row) => row.type === 'email_code_login_failed')
      .map((row) => row.details.reason);
    expect(reasons).toEqual(['mfa_required', 'bad_mfa_code']);
  });

  it.each<[string, string, Record<string, unknown>, string[]]>([
    ['no body fields', EMAIL_CODE_LOGIN, {}, ['email', 'code']],
    ['an address without a code', EMAIL_CODE_LOGIN, { email: 'a@example.com' }, ['code']],
    ['a code without an address', EMAIL_CODE_LOGIN, { code: '123456' }, ['email']],
    ['a code with letters', EMAIL_CODE_LOGIN, { email: 'a@example.com', code: '12a456' }, ['code']],
    [
      'a code too long',
      EMAIL_CODE_LOGIN,
      { email: 'a@example.com', code: '1'.repeat(17) },
      ['code'],
    ],
    ['a number for a code', EMAIL_CODE_LOGIN, { email: 'a@example.com', code: 123456 }, ['code']],
    [
      'an address with a control character',
      EMAIL_CODE_LOGIN,
      { email: 'a\u0000@example.com', code: '123456' },
      ['email'],
    ],
    [
      'an address with an invisible character',
      EMAIL_CODE_LOGIN,
      { email: 'a\u200b@example.com', code: '123456' },
      ['email'],
    ],
    [
      'an address too long',
      EMAIL_CODE_LOGIN,
      { email: `${'a'.repeat(320)}@example.com`, code: '123456' },
      ['email'],
    ],
    [
      'a token with an address',
      EMAIL_CODE_LOGIN,
      { token: 'x'.repeat(43), email: 'a@b.co' },
      ['token'],
    ],
    ['a token with a code', EMAIL_CODE_LOGIN, { token: 'x'.repeat(43), code: '123456' }, ['token']],
    ['a token too long', EMAIL_CODE_LOGIN, { token: 'x'.repeat(513) }, ['token']],
    ['an empty token', EMAIL_CODE_LOGIN, { token: '' }, ['token']],
    [
      'a second-factor code too long',
      EMAIL_CODE_LOGIN,
      { token: 'x'.repeat(43), secondFactorCode: '1'.repeat(33) },
      ['secondFactorCode'],
    ],
    ['no address to send to', EMAIL_CODE_SEND, {}, ['email']],
    ['an address that is none', EMAIL_CODE_SEND, { email: 'not-an-address' }, ['email']],
    ['a number for an address', EMAIL_CODE_SEND, { email: 42 }, ['email']],
  ])('should refuse %s with problem details', async (_case, path, body, fields) => {
    const res = await t.post(path, body);

    expect(res.status).toBe(400);
    expect(res.json()).toEqual(problemDetails(fields));
    expect(Object.keys(res.json<{ errors: object }>().errors).sort()).toEqual([...fields].sort());
  });
});

describe('sign-in with a mailed code: generated hostile bodies', () => {
  const sink = useSmtpSink();
  const t = useSharedTestApp(() => ({ environment: emailCodeEnvironment(sink) }));
  /** What must never reach a client: stack frames, SQL, driver names, file paths. */
  const leaks = [/\n\s+at /, /node_modules/, /SQLITE/i, /SELECT |INSERT |UPDATE /, /\.ts:\d+/];
  const hostileString = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 80 }),
    fc.constantFrom('\u0000', '\u202e123456', '١٢٣٤٥٦', '123456\u200b', ' 123456 ', '-1', '1e6'),
    fc.string({ unit: 'grapheme', minLength: 300, maxLength: 700 }),
  );
  const value = fc.oneof(hostileString, fc.integer(), fc.constant(null), fc.boolean(), fc.object());
  const body = fc.record(
    { email: value, code: value, token: value, secondFactorCode: value, extra: value },
    { requiredKeys: [] },
  );

  it('should answer every generated body with a documented status and shape, never a 500', async () => {
    const user = await createUser(t);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(EMAIL_CODE_SEND, EMAIL_CODE_LOGIN),
        body,
        fc.boolean(),
        async (path, generated, withAccount) => {
          const sent =
            withAccount && path === EMAIL_CODE_LOGIN
              ? { ...generated, email: user.email }
              : generated;
          const res = await t.post(path, sent);
          expect([202, 400, 401]).toContain(res.status);
          const answer = res.json<Record<string, unknown>>();
          if (res.status === 400) {
            expect(answer).toEqual(
              expect.objectContaining({ status: 400, errors: expect.any(Object) }),
            );
          } else if (res.status === 401) {
            expect(answer).toEqual(errorBody(401, INVALID_CODE));
          } else {
            expect(answer).toEqual({ message: REQUESTED });
          }
          for (const leak of leaks) {
            expect(res.text).not.toMatch(leak);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('sign-in with a mailed code, off (the default)', () => {
  const sink = useSmtpSink();
  const t = useSharedTestApp(() => ({
    environment: { ...emailCodeEnvironment(sink), EmailCode__Enabled: 'false' },
  }));

  it('should answer both routes 404, and send nothing', async () => {
    const user = await createUser(t);

    const send = await t.post(EMAIL_CODE_SEND, { email: user.email });
    const login = await t.post(EMAIL_CODE_LOGIN, { email: user.email, code: '123456' });
    await mailSettled(t);

    expect([send.status, send.json()]).toEqual([404, errorBody(404, DISABLED)]);
    expect([login.status, login.json()]).toEqual([404, errorBody(404, DISABLED)]);
    expect(sink.to(user.email)).toEqual([]);
    expect(await auditRows(t.database, user.id)).toEqual([]);
  });
});

describe('asking for a code: nothing tells whether an address has an account', () => {
  /** Units of work each request ran, with the sender held still so only requests count. */
  const units: string[] = [];
  const t = useSharedTestApp(() => ({
    environment: emailCodeEnvironment({ url: 'smtp://127.0.0.1:9' }),
    override: holdSendersStill,
  }));

  beforeAll(() => recordUnitsOfWork(t.app, units));

  it('should answer and work alike for an address with an account, a deactivated one and none', async () => {
    const user = await createUser(t);
    const inactive = await createUser(t, { isActive: false });
    const work: string[][] = [];
    const bodies = new Set<string>();

    for (const email of [user.email, inactive.email, `nobody-${user.id}@example.com`]) {
      units.length = 0;
      const res = await t.post(EMAIL_CODE_SEND, { email });
      expect(res.status).toBe(202);
      work.push([...units]);
      bodies.add(res.text);
    }

    expect([...bodies]).toEqual([JSON.stringify({ message: REQUESTED })]);
    // One insert of the request each, and nothing that reads the account.
    expect(work).toEqual([['run'], ['run'], ['run']]);
    const rows = await t.database.query<{ state: string; userId: string | null }>(
      `SELECT "state", "userId" FROM mail_outbox WHERE "kind" = 'email_code'`,
    );
    expect(rows).toEqual([
      { state: 'requested', userId: null },
      { state: 'requested', userId: null },
      { state: 'requested', userId: null },
    ]);
  });
});
