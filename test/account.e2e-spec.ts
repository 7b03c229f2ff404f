import { createHash } from 'node:crypto';
import { MailSender } from '../src/mail/mail-sender.js';
import { ManagementServer } from '../src/metrics/management-server.js';
import { findRefreshToken } from './factories/refresh-token.factory.js';
import {
  createUser,
  DEFAULT_PASSWORD,
  registerUser,
  reloadUser,
} from './factories/user.factory.js';
import { auditRows } from './utils/audit-rows.js';
import {
  TEST_HASH_ITERATIONS,
  TEST_SECRET_KEY,
  type TestApp,
  type TestResponse,
  useSharedTestApp,
} from './utils/create-test-app.js';
import {
  bearerRefusal,
  challengeOf,
  errorBody,
  problemDetails,
  UNAUTHORIZED_BODY,
} from './utils/expected-bodies.js';
import { httpRequest } from './utils/http.js';
import { accessTokenClaims, decodeJwt, signJwt } from './utils/jwt.js';
import { Exposition } from './utils/prometheus-text.js';
import {
  EMAIL_CHANGE,
  EMAIL_VERIFY,
  EMAIL_VERIFY_RESEND,
  LOGIN,
  ME,
  PASSWORD_CHANGE,
  PASSWORD_FORGOT,
  PASSWORD_RESET,
  REFRESH,
} from './utils/routes.js';
import { tokenOf, useSmtpSink, type SmtpSink } from './utils/smtp-sink.js';
import { holdSendersStill, recordUnitsOfWork } from './utils/units-of-work.js';

// Every flow as a person would go through it: the service mails a real SMTP server (smtp-server
// on a free loopback port), the test reads the mail (mailparser), takes the link's token the way
// the operator's front end would, and calls the API with it.

const NEW_PASSWORD = 'N3w!secure';
const WRONG_PASSWORD = 'Wr0ng!Password';
const SECOND_MS = 1000;
const MINUTE_MS = 60 * SECOND_MS;
const FROM = 'Keygate <no-reply@keygate.test>';
const RESET_PAGE = 'https://app.example.com/reset-password?token={token}';
const VERIFY_PAGE = 'https://app.example.com/verify-email?token={token}';

/** The environment of an app that sends mail to `sink`. */
export function mailEnvironment(sink: SmtpSink): Record<string, string> {
  return {
    Smtp__Url: sink.url,
    Smtp__From: FROM,
    Mail__ResetPasswordUrl: RESET_PAGE,
    Mail__VerifyEmailUrl: VERIFY_PAGE,
  };
}

interface AuthBody {
  readonly accessToken: string;
  readonly refreshToken: string;
}

function deleteAccount(t: TestApp, body: unknown, accessToken?: string): Promise<TestResponse> {
  return t.request(ME, {
    method: 'DELETE',
    body: JSON.stringify(body),
    headers: {
      'content-type': 'application/json',
      ...(accessToken === undefined ? {} : { authorization: `Bearer ${accessToken}` }),
    },
  });
}

async function login(t: TestApp, email: string, password: string): Promise<TestResponse> {
  return t.post(LOGIN, { email, password });
}

/** Waits until the sender has nothing left to do that is due now. */
async function mailSettled(t: TestApp): Promise<void> {
  const sender = t.app.get(MailSender);
  sender.wake();
  await sender.idle();
}

async function scrape(t: TestApp): Promise<Exposition> {
  const address = t.app.get(ManagementServer).address;
  if (address === null) {
    throw new Error('the management listener is not listening');
  }
  const response = await httpRequest(`http://${address.address}:${address.port}`, '/metrics');
  return new Exposition(response.text);
}

function outboxRows(t: TestApp, userId: string): Promise<Record<string, unknown>[]> {
  return t.database.query('SELECT * FROM mail_outbox WHERE "userId" = $1', [userId]);
}

describe('account flows, with mail through a real SMTP server', () => {
  const sink = useSmtpSink();

  beforeEach(() => {
    sink.verdict = 'accept';
    sink.beforeAnswer = null;
  });

  const t = useSharedTestApp(() => ({ environment: mailEnvironment(sink) }));

  describe('e-mail verification', () => {
    it('should mail a link at registration that verifies the address once', async () => {
      const user = await registerUser(t);
      const registeredToken = decodeJwt(user.accessToken).payload;

      const [mail] = await sink.waitFor(user.email);
      expect(mail).toEqual(
        expect.objectContaining({ from: 'no-reply@keygate.test', subject: 'Verifica tu email' }),
      );
      expect(mail.link).toMatch(/^https:\/\/app\.example\.com\/verify-email\?token=[\w-]{43}$/);
      expect(decodeEntities(mail.html)).toContain(`href="${mail.link}"`);
      expect(mail.messageId).toMatch(/^<[0-9a-f-]{36}@keygate\.test>$/);
      expect(registeredToken.email_verified).toBe(false);

      const verified = await t.post(EMAIL_VERIFY, { token: tokenOf(mail.link) });
      expect(verified.status).toBe(200);
      expect(verified.json()).toEqual({ message: 'Email verificado exitosamente.' });

      const again = await t.post(EMAIL_VERIFY, { token: tokenOf(mail.link) });
      expect(again.status).toBe(400);
      expect(again.json()).toEqual(errorBody(400, 'Token inválido o expirado.'));

      const session = (await login(t, user.email, user.password)).json<AuthBody>();
      expect(decodeJwt(session.accessToken).payload.email_verified).toBe(true);
      const me = await t.get(ME, session.accessToken);
      expect(Object.keys(me.json()).sort()).toEqual(['createdAt', 'email', 'id', 'username']);
    });

    it('should mail another link on request, spaced by the minimum interval, and refuse a verified address', async () => {
      const user = await registerUser(t);
      await sink.waitFor(user.email);

      const spaced = await t.post(EMAIL_VERIFY_RESEND, {}, user.accessToken);
      expect(spaced.status).toBe(202);
      expect(spaced.json()).toEqual({ message: 'Te enviaremos un enlace de verificación.' });
      await mailSettled(t);
      expect(sink.to(user.email)).toHaveLength(1);

      t.clock.advance(61 * SECOND_MS);
      const resent = await t.post(EMAIL_VERIFY_RESEND, {}, user.accessToken);
      expect(resent.status).toBe(202);
      const [first, second] = await sink.waitFor(user.email, 2);

      // The newer link replaced the older one.
      const old = await t.post(EMAIL_VERIFY, { token: tokenOf(first.link) });
      expect(old.json()).toEqual(errorBody(400, 'Token inválido o expirado.'));
      expect((await t.post(EMAIL_VERIFY, { token: tokenOf(second.link) })).status).toBe(200);

      const verified = await t.post(EMAIL_VERIFY_RESEND, {}, user.accessToken);
      expect(verified.status).toBe(409);
      expect(verified.json()).toEqual(errorBody(409, 'El email ya está verificado.'));
    });

    it('should refuse an expired link', async () => {
      const user = await registerUser(t);
      const [mail] = await sink.waitFor(user.email);

      t.clock.advance(48 * 60 * MINUTE_MS);
      const res = await t.post(EMAIL_VERIFY, { token: tokenOf(mail.link) });

      expect(res.status).toBe(400);
      expect(res.json()).toEqual(errorBody(400, 'Token inválido o expirado.'));
      expect((await reloadUser(t, user.id)).emailVerifiedAt).toBeNull();
    });
  });

  describe('forgotten password', () => {
    it('should answer every address alike and mail a working link only to an account', async () => {
      const user = await registerUser(t);
      await sink.waitFor(user.email);
      const other = (await login(t, user.email, user.password)).json<AuthBody>();
      await createUserState(t, user.id, { failedLoginAttempts: 3 });
      const unknown = `nobody-${user.id}@example.com`;

      const known = await t.post(PASSWORD_FORGOT, { email: user.email.toUpperCase() });
      const absent = await t.post(PASSWORD_FORGOT, { email: unknown });

      const expected = {
        message:
          'Si existe una cuenta con ese email, recibirás un enlace para restablecer la contraseña.',
      };
      expect([known.status, absent.status]).toEqual([202, 202]);
      expect([known.json(), absent.json()]).toEqual([expected, expected]);
      const [, mail] = await sink.waitFor(user.email, 2);
      await mailSettled(t);
      expect(sink.to(unknown)).toEqual([]);
      expect(mail.subject).toBe('Restablece tu contraseña');
      expect(mail.link).toMatch(/^https:\/\/app\.example\.com\/reset-password\?token=[\w-]{43}$/);

      const reset = await t.post(PASSWORD_RESET, {
        token: tokenOf(mail.link),
        newPassword: NEW_PASSWORD,
      });
      expect(reset.status).toBe(200);
      expect(reset.json()).toEqual({ message: 'Contraseña restablecida exitosamente.' });

      // Every session ended; the old password is gone; the counter is left as it was.
      for (const refreshToken of [user.refreshToken, other.refreshToken]) {
        const refreshed = await t.post(REFRESH, { refreshToken });
        expect(refreshed.json()).toEqual(errorBody(401, 'Refresh token revocado.'));
      }
      expect((await reloadUser(t, user.id)).failedLoginAttempts).toBe(3);
      expect((await login(t, user.email, user.password)).status).toBe(401);
      expect((await login(t, user.email, NEW_PASSWORD)).status).toBe(200);

      const reused = await t.post(PASSWORD_RESET, {
        token: tokenOf(mail.link),
        newPassword: 'An0ther!pass',
      });
      expect(reused.status).toBe(400);
      expect(reused.json()).toEqual(errorBody(400, 'Token inválido o expirado.'));
    });

    it('should send one mail inside the minimum interval, and a replacing one after it', async () => {
      const user = await createUser(t);

      await t.post(PASSWORD_FORGOT, { email: user.email });
      await t.post(PASSWORD_FORGOT, { email: user.email });
      await sink.waitFor(user.email);
      await mailSettled(t);
      expect(sink.to(user.email)).toHaveLength(1);

      t.clock.advance(61 * SECOND_MS);
      await t.post(PASSWORD_FORGOT, { email: user.email });
      const [first, second] = await sink.waitFor(user.email, 2);

      const old = await t.post(PASSWORD_RESET, {
        token: tokenOf(first.link),
        newPassword: NEW_PASSWORD,
      });
      expect(old.json()).toEqual(errorBody(400, 'Token inválido o expirado.'));
      const fresh = await t.post(PASSWORD_RESET, {
        token: tokenOf(second.link),
        newPassword: NEW_PASSWORD,
      });
      expect(fresh.status).toBe(200);
    });

    it('should refuse a link after 30 minutes, and an unknown token', async () => {
      const user = await createUser(t);
      await t.post(PASSWORD_FORGOT, { email: user.email });
      const [mail] = await sink.waitFor(user.email);

      t.clock.advance(30 * MINUTE_MS);
      const expired = await t.post(PASSWORD_RESET, {
        token: tokenOf(mail.link),
        newPassword: NEW_PASSWORD,
      });
      const unknown = await t.post(PASSWORD_RESET, {
        token: 'x'.repeat(43),
        newPassword: NEW_PASSWORD,
      });

      expect([expired.status, unknown.status]).toEqual([400, 400]);
      expect(expired.json()).toEqual(errorBody(400, 'Token inválido o expirado.'));
      expect(unknown.json()).toEqual(errorBody(400, 'Token inválido o expirado.'));
      expect((await login(t, user.email, DEFAULT_PASSWORD)).status).toBe(200);
    });

    it('should mail nothing for a deactivated account, and answer it alike', async () => {
      const user = await createUser(t, { isActive: false });

      const res = await t.post(PASSWORD_FORGOT, { email: user.email });
      await mailSettled(t);

      expect(res.status).toBe(202);
      expect(sink.to(user.email)).toEqual([]);
      expect(await outboxRows(t, user.id)).toEqual([]);
    });

    it('should keep only a sealed token in the outbox and only its digest in account_tokens', async () => {
      const user = await createUser(t);
      // What the database holds while the mail is on its way: the row still carries its token.
      let whileSending = '';
      sink.beforeAnswer = async () => {
        whileSending = JSON.stringify([
          await outboxRows(t, user.id),
          await t.database.query('SELECT * FROM account_tokens WHERE "userId" = $1', [user.id]),
        ]);
      };
      await t.post(PASSWORD_FORGOT, { email: user.email });
      const [mail] = await sink.waitFor(user.email);
      const token = tokenOf(mail.link);

      const stored = await t.database.query<{ tokenHash: string }>(
        'SELECT "tokenHash" FROM account_tokens WHERE "userId" = $1',
        [user.id],
      );
      expect(stored).toEqual([{ tokenHash: createHash('sha256').update(token).digest('hex') }]);
      const [pending] = JSON.parse(whileSending) as [Array<{ secret: string | null }>];
      expect(pending.map((row) => row.secret)).toEqual([expect.stringMatching(/^v1\./)]);
      expect(whileSending).not.toContain(token);
      expect(t.logs.text()).not.toContain(token);
    });
  });

  describe('change password', () => {
    it('should refuse a wrong current password like a wrong login password, counting it', async () => {
      const user = await registerUser(t);

      for (let attempt = 1; attempt <= 5; attempt += 1) {
        const res = await t.post(
          PASSWORD_CHANGE,
          { currentPassword: WRONG_PASSWORD, newPassword: NEW_PASSWORD },
          user.accessToken,
        );
        expect(res.status).toBe(401);
        expect(res.json()).toEqual(errorBody(401, 'Credenciales inválidas.'));
      }
      const locked = await t.post(
        PASSWORD_CHANGE,
        { currentPassword: user.password, newPassword: NEW_PASSWORD },
        user.accessToken,
      );
      expect(locked.json()).toEqual(
        errorBody(401, 'Cuenta bloqueada temporalmente. Intenta en 16 minuto(s).'),
      );
      const loginNow = await login(t, user.email, user.password);
      expect(loginNow.json()).toEqual(
        errorBody(401, 'Cuenta bloqueada temporalmente. Intenta en 16 minuto(s).'),
      );
      expect((await reloadUser(t, user.id)).failedLoginAttempts).toBe(5);
    });

    it("should set a new password at today's cost, keep the caller's session and end the others", async () => {
      const user = await registerUser(t);
      const current = (await login(t, user.email, user.password)).json<AuthBody>();
      const third = (await login(t, user.email, user.password)).json<AuthBody>();
      const currentSession = decodeJwt(current.accessToken).payload.sid;

      const res = await t.post(
        PASSWORD_CHANGE,
        { currentPassword: user.password, newPassword: NEW_PASSWORD },
        current.accessToken,
      );

      expect(res.status).toBe(200);
      expect(res.json()).toEqual({ message: 'Contraseña actualizada exitosamente.' });
      const stored = await reloadUser(t, user.id);
      expect(stored.passwordHash.split('$')[1]).toBe(String(TEST_HASH_ITERATIONS));
      for (const ended of [user.refreshToken, third.refreshToken]) {
        const refused = await t.post(REFRESH, { refreshToken: ended });
        expect({ status: refused.status, body: refused.json() }).toEqual({
          status: 401,
          body: errorBody(401, 'Refresh token revocado.'),
        });
      }
      const rotated = await t.post(REFRESH, { refreshToken: current.refreshToken });
      expect(rotated.status).toBe(200);
      const next = rotated.json<AuthBody>();
      expect(decodeJwt(next.accessToken).payload.sid).toBe(currentSession);
      expect((await t.post(REFRESH, { refreshToken: next.refreshToken })).status).toBe(200);
      expect((await login(t, user.email, user.password)).status).toBe(401);
      expect((await login(t, user.email, NEW_PASSWORD)).status).toBe(200);
      const changed = (await auditRows(t.database, user.id)).find(
        (row) => row.type === 'password_changed',
      );
      const endedIds = await Promise.all(
        [user.refreshToken, third.refreshToken].map(
          async (raw) => (await findRefreshToken(t, raw))?.familyId,
        ),
      );
      expect(changed?.details).toEqual({
        keptFamilyId: currentSession,
        endedSessionIds: expect.arrayContaining(endedIds) as unknown,
      });
      expect(changed?.details.endedSessionIds).toHaveLength(endedIds.length);
    });

    it("should end every session, the caller's too, for an access token that names none", async () => {
      // Tokens issued before access tokens carried `sid` still verify until they expire.
      const user = await registerUser(t);
      const other = (await login(t, user.email, user.password)).json<AuthBody>();
      const withoutSid = signJwt(
        { alg: 'HS256', typ: 'JWT' },
        accessTokenClaims(user, t.clock.now()),
        TEST_SECRET_KEY,
      );

      const res = await t.post(
        PASSWORD_CHANGE,
        { currentPassword: user.password, newPassword: NEW_PASSWORD },
        withoutSid,
      );

      expect(res.status).toBe(200);
      expect(res.json()).toEqual({ message: 'Contraseña actualizada exitosamente.' });
      for (const ended of [user.refreshToken, other.refreshToken]) {
        const refused = await t.post(REFRESH, { refreshToken: ended });
        expect({ status: refused.status, body: refused.json() }).toEqual({
          status: 401,
          body: errorBody(401, 'Refresh token revocado.'),
        });
      }
    });

    it.each([
      [
        'the same password again',
        { currentPassword: DEFAULT_PASSWORD, newPassword: DEFAULT_PASSWORD },
        errorBody(400, 'La nueva contraseña debe ser distinta de la actual.'),
      ],
      [
        'a new password that breaks the registration rule',
        { currentPassword: DEFAULT_PASSWORD, newPassword: 'weak' },
        problemDetails(['newPassword']),
      ],
      ['no current password', { newPassword: NEW_PASSWORD }, problemDetails(['currentPassword'])],
    ])('should refuse %s with 400', async (_case, body, expected) => {
      const user = await registerUser(t);

      const res = await t.post(PASSWORD_CHANGE, body, user.accessToken);

      expect(res.status).toBe(400);
      expect(res.json()).toEqual(expected);
    });
  });

  describe('change e-mail', () => {
    it('should change the address once the link mailed to it is followed, and tell the old one', async () => {
      const user = await registerUser(t);
      await sink.waitFor(user.email);
      const newEmail = `moved-${user.id}@example.org`;

      const res = await t.post(
        EMAIL_CHANGE,
        { password: user.password, newEmail: `  ${newEmail.toUpperCase()} ` },
        user.accessToken,
      );
      expect(res.status).toBe(202);
      expect(res.json()).toEqual({
        message: 'Te enviaremos un enlace de confirmación a la nueva dirección.',
      });
      const [confirmation] = await sink.waitFor(newEmail);
      expect(confirmation.subject).toBe('Confirma tu nuevo email');
      // Until then the account keeps its address.
      expect((await login(t, user.email, user.password)).status).toBe(200);

      const verified = await t.post(EMAIL_VERIFY, { token: tokenOf(confirmation.link) });
      expect(verified.status).toBe(200);
      expect(verified.json()).toEqual({ message: 'Email actualizado exitosamente.' });

      const notices = await sink.waitFor(user.email, 2);
      expect(notices[1]).toEqual(
        expect.objectContaining({ subject: 'Tu email ha cambiado', link: null }),
      );
      expect(notices[1].text).toContain(newEmail);
      expect((await login(t, user.email, user.password)).status).toBe(401);
      const session = (await login(t, newEmail, user.password)).json<AuthBody>();
      expect((await t.get(ME, session.accessToken)).json()).toEqual(
        expect.objectContaining({ email: newEmail }),
      );
      expect(decodeJwt(session.accessToken).payload.email_verified).toBe(true);
    });

    it('should refuse a taken address with the registration text, after the password', async () => {
      const user = await registerUser(t);
      const taken = await createUser(t);

      const wrong = await t.post(
        EMAIL_CHANGE,
        { password: WRONG_PASSWORD, newEmail: taken.email },
        user.accessToken,
      );
      const conflict = await t.post(
        EMAIL_CHANGE,
        { password: user.password, newEmail: taken.email },
        user.accessToken,
      );
      const same = await t.post(
        EMAIL_CHANGE,
        { password: user.password, newEmail: user.email },
        user.accessToken,
      );

      expect(wrong.json()).toEqual(errorBody(401, 'Credenciales inválidas.'));
      expect(conflict.status).toBe(409);
      expect(conflict.json()).toEqual(errorBody(409, 'Ya existe una cuenta con ese email.'));
      expect(same.json()).toEqual(errorBody(400, 'El nuevo email es igual al actual.'));
    });

    it('should answer 409 when the address was taken between the request and the link', async () => {
      const user = await registerUser(t);
      const newEmail = `contested-${user.id}@example.org`;
      await t.post(EMAIL_CHANGE, { password: user.password, newEmail }, user.accessToken);
      const [confirmation] = await sink.waitFor(newEmail);
      await registerUser(t, { email: newEmail });

      const res = await t.post(EMAIL_VERIFY, { token: tokenOf(confirmation.link) });

      expect(res.status).toBe(409);
      expect(res.json()).toEqual(errorBody(409, 'Ya existe una cuenta con ese email.'));
      expect((await reloadUser(t, user.id)).email).toBe(user.email);
    });
  });

  describe('delete the account', () => {
    it('should delete the account and its tokens with the password, leaving pseudonymous audit rows', async () => {
      const user = await registerUser(t);
      await sink.waitFor(user.email);

      const wrong = await deleteAccount(t, { password: WRONG_PASSWORD }, user.accessToken);
      expect(wrong.json()).toEqual(errorBody(401, 'Credenciales inválidas.'));
      expect((await reloadUser(t, user.id)).failedLoginAttempts).toBe(1);

      const res = await deleteAccount(t, { password: user.password }, user.accessToken);
      expect(res.status).toBe(200);
      expect(res.json()).toEqual({ message: 'Cuenta eliminada exitosamente.' });

      expect((await t.get(ME, user.accessToken)).json()).toEqual(
        errorBody(404, 'Usuario no encontrado.'),
      );
      expect((await login(t, user.email, user.password)).json()).toEqual(
        errorBody(401, 'Credenciales inválidas.'),
      );
      expect((await t.post(REFRESH, { refreshToken: user.refreshToken })).json()).toEqual(
        errorBody(401, 'Refresh token inválido.'),
      );
      for (const table of ['users', 'sessions', 'account_tokens', 'mail_outbox']) {
        const column = table === 'users' ? 'id' : 'userId';
        const rows = await t.database.query(`SELECT * FROM ${table} WHERE "${column}" = $1`, [
          user.id,
        ]);
        expect({ table, rows }).toEqual({ table, rows: [] });
      }
      // The sessions' tokens went with them.
      expect(await findRefreshToken(t, user.refreshToken)).toBeNull();
      const trail = await auditRows(t.database, user.id);
      expect(trail.map((row) => row.type)).toEqual(
        expect.arrayContaining(['registered', 'password_confirmation_failed', 'account_deleted']),
      );
      expect(JSON.stringify(trail)).not.toContain(user.email);
    });

    it('should answer 404 for the bearer of a token whose account is gone', async () => {
      const user = await registerUser(t);
      await deleteAccount(t, { password: user.password }, user.accessToken);

      const again = await deleteAccount(t, { password: user.password }, user.accessToken);

      expect(again.status).toBe(404);
      expect(again.json()).toEqual(errorBody(404, 'Usuario no encontrado.'));
    });
  });

  describe('delivery', () => {
    it('should retry a mail the server defers, with the same Message-ID, and count it', async () => {
      const before = await scrape(t);
      sink.verdict = 'defer';
      const user = await createUser(t);
      await t.post(PASSWORD_FORGOT, { email: user.email });
      await mailSettled(t);
      const [pending] = await outboxRows(t, user.id);
      expect(pending).toEqual(
        expect.objectContaining({ state: 'pending', attempts: 1, lastError: 'EMESSAGE 451' }),
      );

      sink.verdict = 'accept';
      await mailSettled(t);
      expect(sink.to(user.email)).toEqual([]);
      t.clock.advance(30 * SECOND_MS);
      await mailSettled(t);
      const [mail] = await sink.waitFor(user.email);

      expect(mail.messageId).toBe(`<${String(pending.id)}@keygate.test>`);
      const [sent] = await outboxRows(t, user.id);
      expect(sent).toEqual(expect.objectContaining({ state: 'sent', attempts: 2, secret: null }));
      const after = await scrape(t);
      const kind = { kind: 'password_reset' };
      expect([
        after.delta(before, 'keygate_mail_retries_total', kind),
        after.delta(before, 'keygate_mails_sent_total', kind),
        after.delta(before, 'keygate_mails_failed_total', kind),
      ]).toEqual([1, 1, 0]);
    });

    it('should give a mail up at once when the server refuses it for good', async () => {
      const before = await scrape(t);
      sink.verdict = 'reject';
      const user = await createUser(t);

      await t.post(PASSWORD_FORGOT, { email: user.email });
      await mailSettled(t);

      const [failed] = await outboxRows(t, user.id);
      expect(failed).toEqual(
        expect.objectContaining({ state: 'failed', attempts: 1, secret: null }),
      );
      const after = await scrape(t);
      expect(after.delta(before, 'keygate_mails_failed_total', { kind: 'password_reset' })).toBe(1);
    });
  });

  describe('authentication and validation of the new routes', () => {
    it.each([
      ['POST', PASSWORD_CHANGE],
      ['POST', EMAIL_VERIFY_RESEND],
      ['POST', EMAIL_CHANGE],
      ['DELETE', ME],
    ])('should answer %s %s without a bearer token with the bare 401', async (method, path) => {
      const res = await t.request(path, {
        method,
        body: '{}',
        headers: { 'content-type': 'application/json' },
      });

      expect(res.status).toBe(401);
      expect(res.json()).toEqual(UNAUTHORIZED_BODY);
    });

    it.each([
      [PASSWORD_FORGOT, {}, ['email']],
      [PASSWORD_FORGOT, { email: 'not-an-address' }, ['email']],
      [PASSWORD_RESET, { newPassword: NEW_PASSWORD }, ['token']],
      [PASSWORD_RESET, { token: '', newPassword: NEW_PASSWORD }, ['token']],
      [PASSWORD_RESET, { token: 'x'.repeat(513), newPassword: NEW_PASSWORD }, ['token']],
      [PASSWORD_RESET, { token: 'x'.repeat(43), newPassword: 'short' }, ['newPassword']],
      [EMAIL_VERIFY, {}, ['token']],
      [EMAIL_VERIFY, { token: 42 }, ['token']],
    ])('should answer POST %s %j with problem details', async (path, body, fields) => {
      const res = await t.post(path, body);

      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.json()).toEqual(problemDetails(fields));
    });

    it.each([
      [EMAIL_CHANGE, { password: DEFAULT_PASSWORD }, ['newEmail']],
      [EMAIL_CHANGE, { password: DEFAULT_PASSWORD, newEmail: 'nope' }, ['newEmail']],
      [EMAIL_CHANGE, { newEmail: 'a@example.com' }, ['password']],
      [ME, {}, ['password']],
    ])('should answer %s %j with problem details for a bearer', async (path, body, fields) => {
      const user = await registerUser(t);

      const res =
        path === ME
          ? await deleteAccount(t, body, user.accessToken)
          : await t.post(path, body, user.accessToken);

      expect(res.status).toBe(400);
      expect(res.json()).toEqual(problemDetails(fields));
    });
  });
});

describe('Auth__RequireVerifiedEmail=true', () => {
  const sink = useSmtpSink();

  const t = useSharedTestApp(() => ({
    environment: { ...mailEnvironment(sink), Auth__RequireVerifiedEmail: 'true' },
  }));

  it('should refuse login and refresh to an unverified address, mail a new link, and let it in once verified', async () => {
    const user = await registerUser(t);
    const [registration] = await sink.waitFor(user.email);

    const wrong = await login(t, user.email, WRONG_PASSWORD);
    expect(wrong.json()).toEqual(errorBody(401, 'Credenciales inválidas.'));
    t.clock.advance(61 * SECOND_MS);
    const refused = await login(t, user.email, user.password);
    expect(refused.status).toBe(401);
    expect(refused.json()).toEqual(errorBody(401, 'Email no verificado.'));
    const refreshed = await t.post(REFRESH, { refreshToken: user.refreshToken });
    expect(refreshed.json()).toEqual(errorBody(401, 'Email no verificado.'));

    // The refused login mailed a new link, which replaced the registration's.
    const [, reminder] = await sink.waitFor(user.email, 2);
    const old = await t.post(EMAIL_VERIFY, { token: tokenOf(registration.link) });
    expect(old.json()).toEqual(errorBody(400, 'Token inválido o expirado.'));
    expect((await t.post(EMAIL_VERIFY, { token: tokenOf(reminder.link) })).status).toBe(200);

    expect((await login(t, user.email, user.password)).status).toBe(200);
    expect((await t.post(REFRESH, { refreshToken: user.refreshToken })).status).toBe(200);
  });

  it('should treat a reset link as proof of the address', async () => {
    const user = await createUser(t);
    await t.post(PASSWORD_FORGOT, { email: user.email });
    const [mail] = await sink.waitFor(user.email);

    await t.post(PASSWORD_RESET, { token: tokenOf(mail.link), newPassword: NEW_PASSWORD });

    expect((await login(t, user.email, NEW_PASSWORD)).status).toBe(200);
  });
});

describe('Jwt__RequireActiveSession=true', () => {
  // The account routes end sessions; with the opt-in check their access tokens stop at once.
  const sink = useSmtpSink();

  const t = useSharedTestApp(() => ({
    environment: { ...mailEnvironment(sink), Jwt__RequireActiveSession: 'true' },
  }));
  const ENDED = bearerRefusal('Bearer error="invalid_token"');

  it("should keep serving the caller's access token after a password change, and refuse the others'", async () => {
    const user = await registerUser(t);
    const current = (await login(t, user.email, user.password)).json<AuthBody>();

    const res = await t.post(
      PASSWORD_CHANGE,
      { currentPassword: user.password, newPassword: NEW_PASSWORD },
      current.accessToken,
    );

    expect(res.json()).toEqual({ message: 'Contraseña actualizada exitosamente.' });
    expect((await t.get(ME, current.accessToken)).status).toBe(200);
    expect(challengeOf(await t.get(ME, user.accessToken))).toEqual(ENDED);
  });

  it('should refuse every access token of the account after a reset', async () => {
    const user = await registerUser(t);
    await sink.waitFor(user.email);
    const other = (await login(t, user.email, user.password)).json<AuthBody>();
    await t.post(PASSWORD_FORGOT, { email: user.email });
    const [, mail] = await sink.waitFor(user.email, 2);

    const reset = await t.post(PASSWORD_RESET, {
      token: tokenOf(mail.link),
      newPassword: NEW_PASSWORD,
    });

    expect(reset.json()).toEqual({ message: 'Contraseña restablecida exitosamente.' });
    for (const accessToken of [user.accessToken, other.accessToken]) {
      expect(challengeOf(await t.get(ME, accessToken))).toEqual(ENDED);
    }
    const fresh = (await login(t, user.email, NEW_PASSWORD)).json<AuthBody>();
    expect((await t.get(ME, fresh.accessToken)).status).toBe(200);
  });

  it('should answer every access token of a deleted account with 404, as without the check', async () => {
    const user = await registerUser(t);
    const other = (await login(t, user.email, user.password)).json<AuthBody>();

    const res = await deleteAccount(t, { password: user.password }, other.accessToken);

    expect(res.json()).toEqual({ message: 'Cuenta eliminada exitosamente.' });
    for (const accessToken of [user.accessToken, other.accessToken]) {
      const me = await t.get(ME, accessToken);
      expect({ status: me.status, body: me.json() }).toEqual({
        status: 404,
        body: errorBody(404, 'Usuario no encontrado.'),
      });
    }
  });
});

describe('without mail (production, no Smtp__Url)', () => {
  const t = useSharedTestApp();

  it.each([
    ['POST', PASSWORD_FORGOT, { email: 'alice@example.com' }, false],
    ['POST', EMAIL_VERIFY_RESEND, {}, true],
    ['POST', EMAIL_CHANGE, { password: DEFAULT_PASSWORD, newEmail: 'b@example.com' }, true],
  ])('should answer %s %s with 503 and the documented text', async (_m, path, body, bearer) => {
    const user = await registerUser(t);

    const res = await t.post(path, body, bearer ? user.accessToken : undefined);

    expect(res.status).toBe(503);
    expect(res.json()).toEqual(errorBody(503, 'El envío de correos no está configurado.'));
  });

  it('should register, change the password and delete the account without queuing any mail', async () => {
    const user = await registerUser(t);

    const changed = await t.post(
      PASSWORD_CHANGE,
      { currentPassword: user.password, newPassword: NEW_PASSWORD },
      user.accessToken,
    );
    expect(changed.status).toBe(200);
    expect(await t.database.query('SELECT * FROM mail_outbox')).toEqual([]);
    const deleted = await deleteAccount(t, { password: NEW_PASSWORD }, user.accessToken);
    expect(deleted.status).toBe(200);
  });
});

describe('forgotten password: nothing tells whether an address has an account', () => {
  /** Units of work each request ran, with the sender held still so only requests count. */
  const units: string[] = [];
  const t = useSharedTestApp(() => ({
    environment: mailEnvironment({ url: 'smtp://127.0.0.1:9' } as SmtpSink),
    override: holdSendersStill,
  }));

  beforeAll(() => recordUnitsOfWork(t.app, units));

  it('should answer, work and take alike for an address with an account and one without', async () => {
    const user = await createUser(t);
    const unknown = `nobody-${user.id}@example.com`;
    const timings: Record<'known' | 'unknown', number[]> = { known: [], unknown: [] };
    const work: Record<'known' | 'unknown', string[][]> = { known: [], unknown: [] };
    const bodies = new Set<string>();

    // Pairs of requests next to each other in time, in alternating order, so that the load of a
    // shared machine weighs on both sides of a pair alike.
    for (let round = 0; round < 60; round += 1) {
      const pair = [
        ['known', user.email],
        ['unknown', unknown],
      ] as const;
      for (const [kind, email] of round % 2 === 0 ? pair : [...pair].reverse()) {
        units.length = 0;
        const started = process.hrtime.bigint();
        const res = await t.post(PASSWORD_FORGOT, { email });
        timings[kind].push(Number(process.hrtime.bigint() - started) / 1e6);
        work[kind].push([...units]);
        expect(res.status).toBe(202);
        bodies.add(res.text);
      }
    }

    expect([...bodies]).toEqual([
      JSON.stringify({
        message:
          'Si existe una cuenta con ese email, recibirás un enlace para restablecer la contraseña.',
      }),
    ]);
    // The same database work for both: one insert of the request, nothing that reads the account.
    expect(new Set(work.known.map(String))).toEqual(new Set(['run']));
    expect(new Set(work.unknown.map(String))).toEqual(new Set(['run']));
    const typical = median([...timings.known, ...timings.unknown]);
    const gap = median(timings.known.map((time, round) => time - (timings.unknown[round] ?? 0)));
    expect(Math.abs(gap)).toBeLessThan(Math.max(1, 0.25 * typical));
  });
});

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

async function createUserState(
  t: TestApp,
  id: string,
  state: { readonly failedLoginAttempts: number },
): Promise<void> {
  await t.database.query('UPDATE users SET "failedLoginAttempts" = $1 WHERE id = $2', [
    state.failedLoginAttempts,
    id,
  ]);
}

/** The HTML part's character references, as a browser reads them. */
function decodeEntities(html: string): string {
  return html.replace(/&#x([0-9a-f]+);/gi, (_match, hex: string) =>
    String.fromCodePoint(parseInt(hex, 16)),
  );
}
