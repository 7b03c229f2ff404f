import { jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { registerUser, reloadUser, type RegisteredUser } from './factories/user.factory.js';
import { timeStepAt, totpAt } from '../src/two-factor/totp-codes.js';
import { User } from '../src/users/entities/user.entity.js';
import { auditRows } from './utils/audit-rows.js';
import { runCliOn } from './utils/cli-process.js';
import { useSharedTestApp, type TestApp, type TestResponse } from './utils/create-test-app.js';
import { authResponse, errorBody, problemDetails } from './utils/expected-bodies.js';
import { FakeClock } from './utils/fake-clock.js';
import { decodeJwt } from './utils/jwt.js';
import {
  LOGIN,
  ME,
  PASSKEY_LOGIN_OPTIONS,
  PASSKEY_LOGIN_VERIFY,
  PASSKEY_REGISTER_OPTIONS,
  PASSKEY_REGISTER_VERIFY,
  PASSKEYS,
  TOTP_CONFIRM,
  TOTP_ENROLL,
} from './utils/routes.js';
import { SoftwareAuthenticator, type CeremonyOverrides } from './utils/software-authenticator.js';

// Passkeys (issue 27), end to end on the real service, its database and @simplewebauthn/server.
// Ceremonies come from a software authenticator written from the WebAuthn specification
// (test/utils/software-authenticator.ts); it also makes what a browser never would (another
// origin, an old counter, no user verification) and its answers are replayed as recorded.

const RP_ID = 'example.com';
const ORIGIN = 'https://app.example.com';
const T0 = new Date('2026-01-01T00:00:00.000Z');
const MFA_KEY = Buffer.alloc(32, 0xa1).toString('base64');

const UNAVAILABLE = 'Las llaves de acceso no están configuradas.';
const CHALLENGE_INVALID = 'El desafío de la llave de acceso no es válido o ya se usó.';
const VERIFICATION_FAILED = 'No se pudo verificar la llave de acceso.';
const UNKNOWN_PASSKEY = 'Llave de acceso no reconocida.';
const COUNTER_REGRESSED = 'Llave de acceso rechazada: su contador de firmas retrocedió.';
const NOT_FOUND = 'Llave de acceso no encontrada.';
const PROOF_REQUIRED = 'Se requiere la contraseña o una llave de acceso.';
const PROOF_AMBIGUOUS = 'Envía la contraseña o una llave de acceso, no ambas.';
const ALREADY_REGISTERED = 'Esta llave de acceso ya está registrada.';

interface CreationOptions {
  challenge: string;
  user: { id: string; name: string; displayName: string };
}
interface PasskeyBody {
  id: string;
  name: string;
}

function call(t: TestApp, method: string, path: string, body?: unknown, token?: string) {
  return t.request(path, {
    method,
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
  });
}

async function creationOptions(t: TestApp, user: RegisteredUser): Promise<CreationOptions> {
  const response = await t.post(
    PASSKEY_REGISTER_OPTIONS,
    { password: user.password },
    user.accessToken,
  );
  expect(response.status).toBe(200);
  return response.json<CreationOptions>();
}

async function requestOptions(t: TestApp): Promise<{ challenge: string }> {
  const response = await t.post(PASSKEY_LOGIN_OPTIONS, {});
  expect(response.status).toBe(200);
  return response.json<{ challenge: string }>();
}

/** Registers a passkey of `authenticator` for `user` and answers its body. */
async function addPasskey(
  t: TestApp,
  user: RegisteredUser,
  authenticator: SoftwareAuthenticator,
): Promise<PasskeyBody> {
  const options = await creationOptions(t, user);
  const response = await t.post(
    PASSKEY_REGISTER_VERIFY,
    { response: authenticator.create(options) },
    user.accessToken,
  );
  expect(response.status).toBe(201);
  return response.json<PasskeyBody>();
}

async function passkeyLogin(
  t: TestApp,
  authenticator: SoftwareAuthenticator,
  overrides: CeremonyOverrides & { credentialId?: string } = {},
): Promise<TestResponse> {
  const options = await requestOptions(t);
  return t.post(PASSKEY_LOGIN_VERIFY, { response: authenticator.get(options, overrides) });
}

function amrOf(response: TestResponse): unknown {
  return decodeJwt(response.json<{ accessToken: string }>().accessToken).payload.amr;
}

/** The current code of the authenticator app (oathtool is not everywhere; RFC 6238 is tested in totp-codes.spec.ts). */
function totpCode(secret: string, at: Date): Promise<string> {
  return totpAt(secret, timeStepAt(at));
}

async function failureReasons(t: TestApp, userId: string): Promise<unknown[]> {
  return (await auditRows(t.database, userId))
    .filter((row) => row.type === 'passkey_ceremony_failed')
    .map((row) => row.details);
}

describe('passkeys when Passkeys__RpId is not set (the default)', () => {
  const t = useSharedTestApp();

  it.each([
    ['POST', PASSKEY_LOGIN_OPTIONS, {}],
    ['POST', PASSKEY_LOGIN_VERIFY, { response: {} }],
  ])('should answer %s %s with 503 and the interface error body', async (method, path, body) => {
    const response = await call(t, method, path, body);

    expect(response.status).toBe(method === 'POST' && path === PASSKEY_LOGIN_VERIFY ? 400 : 503);
    if (response.status === 503) {
      expect(response.json()).toEqual(errorBody(503, UNAVAILABLE));
    }
  });

  it('should answer the bearer routes with 503 and leave login as the interface says', async () => {
    const user = await registerUser(t);

    const options = await t.post(
      PASSKEY_REGISTER_OPTIONS,
      { password: user.password },
      user.accessToken,
    );
    const list = await t.get(PASSKEYS, user.accessToken);
    const login = await t.post(LOGIN, { email: user.email, password: user.password, passkey: {} });

    expect(options.json()).toEqual(errorBody(503, UNAVAILABLE));
    expect(list.json()).toEqual(errorBody(503, UNAVAILABLE));
    expect(login.status).toBe(400);
    const plain = await t.post(LOGIN, { email: user.email, password: user.password });
    expect(plain.status).toBe(200);
  });
});

describe('passkeys', () => {
  const t = useSharedTestApp(() => ({
    clock: new FakeClock(T0),
    environment: {
      Passkeys__RpId: RP_ID,
      Passkeys__RpName: 'Keygate de prueba',
      Passkeys__Origins: `${ORIGIN},https://example.com`,
      Mfa__EncryptionKeys: MFA_KEY,
    },
  }));

  beforeEach(() => {
    t.clock.set(T0);
  });

  describe('registration', () => {
    it('should answer creation options for the account, with user verification and no attestation', async () => {
      const user = await registerUser(t);

      const response = await t.post(
        PASSKEY_REGISTER_OPTIONS,
        { password: user.password },
        user.accessToken,
      );

      expect(response.status).toBe(200);
      expect(response.json()).toEqual({
        challenge: expect.stringMatching(/^[\w-]{43}$/),
        rp: { name: 'Keygate de prueba', id: RP_ID },
        user: {
          id: Buffer.from(user.id).toString('base64url'),
          name: user.email,
          displayName: user.username,
        },
        pubKeyCredParams: [
          { alg: -8, type: 'public-key' },
          { alg: -7, type: 'public-key' },
          { alg: -257, type: 'public-key' },
        ],
        timeout: 300000,
        attestation: 'none',
        excludeCredentials: [],
        authenticatorSelection: {
          residentKey: 'required',
          requireResidentKey: true,
          userVerification: 'required',
        },
        extensions: { credProps: true },
        hints: [],
      });
    });

    it('should store the passkey and answer it with 201, then list it', async () => {
      const user = await registerUser(t);
      const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN);
      const options = await creationOptions(t, user);

      const response = await t.post(
        PASSKEY_REGISTER_VERIFY,
        { response: authenticator.create(options), name: '  Portátil  ' },
        user.accessToken,
      );

      expect(response.status).toBe(201);
      const passkey = {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'Portátil',
        createdAt: T0.toISOString(),
        lastUsedAt: null,
        isBackupEligible: false,
        isBackedUp: false,
        transports: ['internal'],
      };
      expect(response.json()).toEqual(passkey);
      const list = await t.get(PASSKEYS, user.accessToken);
      expect(list.status).toBe(200);
      expect(list.json()).toEqual({ passkeys: [passkey] });
      const again = await creationOptions(t, user);
      expect(again).toMatchObject({
        excludeCredentials: [
          { id: expect.any(String), type: 'public-key', transports: ['internal'] },
        ],
      });
    });

    it.each([
      ['no proof', {}, 400, PROOF_REQUIRED],
      ['a wrong password', { password: 'Wr0ng!Password' }, 401, 'Credenciales inválidas.'],
    ])('should refuse options for %s', async (_case, body, status, message) => {
      const user = await registerUser(t);

      const response = await t.post(PASSKEY_REGISTER_OPTIONS, body, user.accessToken);

      expect(response.status).toBe(status);
      expect(response.json()).toEqual(errorBody(status, message));
    });

    it('should take an existing passkey as the proof, and refuse both proofs at once', async () => {
      const user = await registerUser(t);
      const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN);
      await addPasskey(t, user, authenticator);

      const proof = authenticator.get(await requestOptions(t));
      const both = await t.post(
        PASSKEY_REGISTER_OPTIONS,
        { password: user.password, passkey: proof },
        user.accessToken,
      );
      const response = await t.post(PASSKEY_REGISTER_OPTIONS, { passkey: proof }, user.accessToken);

      expect(both.json()).toEqual(errorBody(400, PROOF_AMBIGUOUS));
      expect(response.status).toBe(200);
    });

    it("should refuse another account's passkey as the proof", async () => {
      const owner = await registerUser(t);
      const other = await registerUser(t);
      const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN);
      await addPasskey(t, owner, authenticator);

      const response = await t.post(
        PASSKEY_REGISTER_OPTIONS,
        { passkey: authenticator.get(await requestOptions(t)) },
        other.accessToken,
      );

      expect(response.json()).toEqual(errorBody(401, UNKNOWN_PASSKEY));
      expect(await failureReasons(t, other.id)).toEqual([
        { ceremony: 'proof', reason: 'other_account', passkeyId: null },
      ]);
    });

    it.each<[string, CeremonyOverrides, string]>([
      ['another origin', { origin: 'https://evil.example.net' }, VERIFICATION_FAILED],
      ['another relying party', { rpId: 'evil.example.net' }, VERIFICATION_FAILED],
      ['no user verification', { userVerified: false }, VERIFICATION_FAILED],
      ['the type of an assertion', { type: 'webauthn.get' }, VERIFICATION_FAILED],
    ])('should refuse a new credential made with %s', async (_case, overrides, message) => {
      const user = await registerUser(t);
      const options = await creationOptions(t, user);
      const response = await t.post(
        PASSKEY_REGISTER_VERIFY,
        { response: new SoftwareAuthenticator(RP_ID, ORIGIN).create(options, overrides) },
        user.accessToken,
      );

      expect(response.status).toBe(400);
      expect(response.json()).toEqual(errorBody(400, message));
      expect((await t.get(PASSKEYS, user.accessToken)).json()).toEqual({ passkeys: [] });
      expect(await failureReasons(t, user.id)).toEqual([
        { ceremony: 'registration', reason: 'bad_response', passkeyId: null },
      ]);
    });

    it('should refuse a replayed registration, an expired challenge and a challenge of another ceremony or account', async () => {
      const user = await registerUser(t);
      const other = await registerUser(t);
      const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN);
      const recorded = authenticator.create(await creationOptions(t, user));
      expect(
        (await t.post(PASSKEY_REGISTER_VERIFY, { response: recorded }, user.accessToken)).status,
      ).toBe(201);

      const replayed = await t.post(
        PASSKEY_REGISTER_VERIFY,
        { response: recorded },
        user.accessToken,
      );
      const ofLogin = await t.post(
        PASSKEY_REGISTER_VERIFY,
        { response: authenticator.create({ ...(await requestOptions(t)), user: { id: 'x' } }) },
        user.accessToken,
      );
      const ofOther = await t.post(
        PASSKEY_REGISTER_VERIFY,
        { response: authenticator.create(await creationOptions(t, other)) },
        user.accessToken,
      );
      const late = authenticator.create(await creationOptions(t, user));
      t.clock.advance(5 * 60 * 1000);
      const expired = await t.post(PASSKEY_REGISTER_VERIFY, { response: late }, user.accessToken);

      for (const response of [replayed, ofLogin, ofOther, expired]) {
        expect(response.status).toBe(400);
        expect(response.json()).toEqual(errorBody(400, CHALLENGE_INVALID));
      }
      expect(
        (await t.get(PASSKEYS, user.accessToken)).json<{ passkeys: unknown[] }>().passkeys,
      ).toHaveLength(1);
    });

    it('should refuse a credential registered before with 409', async () => {
      const user = await registerUser(t);
      const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN);
      const first = authenticator.create(await creationOptions(t, user));
      await t.post(PASSKEY_REGISTER_VERIFY, { response: first }, user.accessToken);
      // The same credential again, in a fresh ceremony (a browser ignoring excludeCredentials).
      const options = await creationOptions(t, user);
      const again = authenticator.create(options);
      const sameCredential = {
        ...again,
        id: first.id,
        rawId: first.rawId,
        response: { ...first.response, clientDataJSON: again.response.clientDataJSON },
      };

      const response = await t.post(
        PASSKEY_REGISTER_VERIFY,
        { response: sameCredential },
        user.accessToken,
      );

      expect([400, 409]).toContain(response.status);
      expect(response.json()).toEqual(
        response.status === 409
          ? errorBody(409, ALREADY_REGISTERED)
          : errorBody(400, VERIFICATION_FAILED),
      );
    });
  });

  describe('sign-in with a passkey alone', () => {
    it('should answer exactly the interface auth response, with amr hwk and user', async () => {
      const user = await registerUser(t);
      const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN);
      const passkey = await addPasskey(t, user, authenticator);
      t.clock.advance(60_000);

      const response = await passkeyLogin(t, authenticator);

      expect(response.status).toBe(200);
      expect(response.json()).toEqual(authResponse(user));
      expect(amrOf(response)).toEqual(['hwk', 'user']);
      const me = await t.get(ME, response.json<{ accessToken: string }>().accessToken);
      expect(me.status).toBe(200);
      const listed = (await t.get(PASSKEYS, user.accessToken)).json<{ passkeys: unknown[] }>();
      expect(listed.passkeys).toEqual([
        expect.objectContaining({
          id: passkey.id,
          lastUsedAt: new Date(T0.getTime() + 60_000).toISOString(),
        }),
      ]);
      expect((await reloadUser(t, user.id)).lastLoginAt).toEqual(new Date(T0.getTime() + 60_000));
    });

    it('should say swk for a synced passkey, and accept one that keeps no counter every time', async () => {
      const user = await registerUser(t);
      const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN, true, false);
      await addPasskey(t, user, authenticator);

      const first = await passkeyLogin(t, authenticator);
      const second = await passkeyLogin(t, authenticator);

      expect(first.status).toBe(200);
      expect(second.status).toBe(200);
      expect(amrOf(second)).toEqual(['swk', 'user']);
    });

    it('should refuse a replayed assertion', async () => {
      const user = await registerUser(t);
      const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN);
      await addPasskey(t, user, authenticator);
      const recorded = authenticator.get(await requestOptions(t));
      expect((await t.post(PASSKEY_LOGIN_VERIFY, { response: recorded })).status).toBe(200);

      const replayed = await t.post(PASSKEY_LOGIN_VERIFY, { response: recorded });

      expect(replayed.status).toBe(401);
      expect(replayed.json()).toEqual(errorBody(401, CHALLENGE_INVALID));
    });

    it.each<[string, CeremonyOverrides]>([
      ['another origin', { origin: 'https://evil.example.net' }],
      ['an http origin', { origin: 'http://app.example.com' }],
      ['another relying party', { rpId: 'evil.example.net' }],
      ['no user verification', { userVerified: false }],
      ['the type of a registration', { type: 'webauthn.create' }],
    ])('should refuse an assertion made with %s', async (_case, overrides) => {
      const user = await registerUser(t);
      const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN);
      await addPasskey(t, user, authenticator);

      const response = await passkeyLogin(t, authenticator, overrides);

      expect(response.status).toBe(401);
      expect(response.json()).toEqual(errorBody(401, VERIFICATION_FAILED));
    });

    it('should keep unexpired challenges while new ones are made, and drop expired ones', async () => {
      const user = await registerUser(t);
      const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN);
      await addPasskey(t, user, authenticator);
      const first = await requestOptions(t);
      t.clock.advance(4 * 60 * 1000);
      const second = await requestOptions(t);
      t.clock.advance(60 * 1000);
      await requestOptions(t);
      const count = async () =>
        Number(
          (
            await t.database.query<{ n: number | string }>(
              'SELECT COUNT(*) AS "n" FROM "passkey_challenges"',
            )
          )[0].n,
        );
      const before = await count();

      const late = await t.post(PASSKEY_LOGIN_VERIFY, { response: authenticator.get(first) });
      const inTime = await t.post(PASSKEY_LOGIN_VERIFY, { response: authenticator.get(second) });

      expect(late.json()).toEqual(errorBody(401, CHALLENGE_INVALID));
      expect(inTime.status).toBe(200);
      // The third options call deleted the first challenge (expired), not the second.
      expect(before).toBeGreaterThanOrEqual(2);
      t.clock.advance(10 * 60 * 1000);
      await requestOptions(t);
      expect(await count()).toBe(1);
    });

    it('should refuse an expired challenge', async () => {
      const user = await registerUser(t);
      const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN);
      await addPasskey(t, user, authenticator);
      const options = await requestOptions(t);
      t.clock.advance(5 * 60 * 1000);

      const response = await t.post(PASSKEY_LOGIN_VERIFY, { response: authenticator.get(options) });

      expect(response.json()).toEqual(errorBody(401, CHALLENGE_INVALID));
    });

    it('should refuse a signature counter that goes backwards, and record a cloned authenticator', async () => {
      const user = await registerUser(t);
      const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN);
      const passkey = await addPasskey(t, user, authenticator);
      expect((await passkeyLogin(t, authenticator, { counter: 7 })).status).toBe(200);

      const same = await passkeyLogin(t, authenticator, { counter: 7 });
      const behind = await passkeyLogin(t, authenticator, { counter: 3 });
      const ahead = await passkeyLogin(t, authenticator, { counter: 8 });

      expect(same.json()).toEqual(errorBody(401, COUNTER_REGRESSED));
      expect(behind.json()).toEqual(errorBody(401, COUNTER_REGRESSED));
      expect(ahead.status).toBe(200);
      expect(await failureReasons(t, user.id)).toEqual([
        { ceremony: 'login', reason: 'counter_regressed', passkeyId: passkey.id },
        { ceremony: 'login', reason: 'counter_regressed', passkeyId: passkey.id },
      ]);
    });

    it('should refuse an unknown credential, and a deleted one', async () => {
      const user = await registerUser(t);
      const stranger = new SoftwareAuthenticator(RP_ID, ORIGIN);
      stranger.create({ challenge: 'never-sent', user: { id: 'nobody' } });
      const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN);
      const passkey = await addPasskey(t, user, authenticator);

      const unknown = await passkeyLogin(t, stranger);
      const removed = await call(
        t,
        'DELETE',
        `${PASSKEYS}/${passkey.id}`,
        undefined,
        user.accessToken,
      );
      const deleted = await passkeyLogin(t, authenticator);

      expect(unknown.json()).toEqual(errorBody(401, UNKNOWN_PASSKEY));
      expect(removed.status).toBe(204);
      expect(removed.text).toBe('');
      expect(deleted.json()).toEqual(errorBody(401, UNKNOWN_PASSKEY));
    });

    it('should refuse a deactivated account as login does', async () => {
      const user = await registerUser(t);
      const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN);
      await addPasskey(t, user, authenticator);
      await t.dataSource.getRepository(User).update({ id: user.id }, { isActive: false });

      const response = await passkeyLogin(t, authenticator);

      expect(response.json()).toEqual(errorBody(401, 'Cuenta desactivada.'));
    });

    it('should sign in during a password lockout and leave the lockout as it was', async () => {
      const user = await registerUser(t);
      const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN);
      await addPasskey(t, user, authenticator);
      for (let i = 0; i < 5; i += 1) {
        await t.post(LOGIN, { email: user.email, password: 'Wr0ng!Password' });
      }
      const locked = await reloadUser(t, user.id);
      expect(locked.lockoutEnd).not.toBeNull();

      const response = await passkeyLogin(t, authenticator);

      expect(response.status).toBe(200);
      const after = await reloadUser(t, user.id);
      expect(after.failedLoginAttempts).toBe(5);
      expect(after.lockoutEnd).toEqual(locked.lockoutEnd);
      const password = await t.post(LOGIN, { email: user.email, password: user.password });
      expect(password.json()).toEqual(
        errorBody(401, 'Cuenta bloqueada temporalmente. Intenta en 16 minuto(s).'),
      );
    });
  });

  describe('as the second factor of a login', () => {
    async function withTotp(user: RegisteredUser): Promise<void> {
      const enrolled = await t.post(TOTP_ENROLL, { password: user.password }, user.accessToken);
      const { secret } = enrolled.json<{ secret: string }>();
      const confirmed = await t.post(
        TOTP_CONFIRM,
        { code: await totpCode(secret, t.clock.now()) },
        user.accessToken,
      );
      expect(confirmed.status).toBe(200);
    }

    it('should accept a passkey assertion in place of the code, with amr pwd hwk user', async () => {
      const user = await registerUser(t);
      const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN);
      await addPasskey(t, user, authenticator);
      await withTotp(user);

      const passkey = authenticator.get(await requestOptions(t));
      const response = await t.post(LOGIN, { email: user.email, password: user.password, passkey });
      const withoutFactor = await t.post(LOGIN, { email: user.email, password: user.password });

      expect(response.status).toBe(200);
      expect(response.json()).toEqual(authResponse(user));
      expect(amrOf(response)).toEqual(['pwd', 'hwk', 'user']);
      expect(withoutFactor.json()).toEqual(
        errorBody(401, 'Se requiere el código de verificación.'),
      );
    });

    it("should count another account's passkey and a replayed assertion toward the lockout", async () => {
      const user = await registerUser(t);
      const other = await registerUser(t);
      const mine = new SoftwareAuthenticator(RP_ID, ORIGIN);
      const theirs = new SoftwareAuthenticator(RP_ID, ORIGIN);
      await addPasskey(t, user, mine);
      await addPasskey(t, other, theirs);
      await withTotp(user);
      const recorded = mine.get(await requestOptions(t));
      expect(
        (await t.post(LOGIN, { email: user.email, password: user.password, passkey: recorded }))
          .status,
      ).toBe(200);

      const foreign = await t.post(LOGIN, {
        email: user.email,
        password: user.password,
        passkey: theirs.get(await requestOptions(t)),
      });
      const replayed = await t.post(LOGIN, {
        email: user.email,
        password: user.password,
        passkey: recorded,
      });

      expect(foreign.json()).toEqual(errorBody(401, UNKNOWN_PASSKEY));
      expect(replayed.json()).toEqual(errorBody(401, CHALLENGE_INVALID));
      expect((await reloadUser(t, user.id)).failedLoginAttempts).toBe(2);
    });

    it('should ignore a passkey for an account without a second factor', async () => {
      const user = await registerUser(t);

      const response = await t.post(LOGIN, {
        email: user.email,
        password: user.password,
        passkey: new SoftwareAuthenticator(RP_ID, ORIGIN).create({
          challenge: 'x',
          user: { id: 'y' },
        }),
      });

      expect(response.status).toBe(400);
      const plain = await t.post(LOGIN, { email: user.email, password: user.password });
      expect(amrOf(plain)).toEqual(['pwd']);
    });
  });

  describe('list, rename, remove', () => {
    it('should rename a passkey and refuse names and ids that are not acceptable', async () => {
      const user = await registerUser(t);
      const other = await registerUser(t);
      const passkey = await addPasskey(t, user, new SoftwareAuthenticator(RP_ID, ORIGIN));

      const renamed = await call(
        t,
        'PATCH',
        `${PASSKEYS}/${passkey.id}`,
        { name: 'Teléfono' },
        user.accessToken,
      );
      const ofOther = await call(
        t,
        'PATCH',
        `${PASSKEYS}/${passkey.id}`,
        { name: 'Mío' },
        other.accessToken,
      );
      const notAnId = await call(t, 'PATCH', `${PASSKEYS}/%00x`, { name: 'x' }, user.accessToken);

      expect(renamed.status).toBe(200);
      expect(renamed.json()).toMatchObject({ id: passkey.id, name: 'Teléfono' });
      expect(ofOther.json()).toEqual(errorBody(404, NOT_FOUND));
      expect(notAnId.json()).toEqual(errorBody(404, NOT_FOUND));
      for (const name of ['', '   ', 'a\u0000b', 'a\u200Bb', 'x'.repeat(65), 42]) {
        const refused = await call(
          t,
          'PATCH',
          `${PASSKEYS}/${passkey.id}`,
          { name },
          user.accessToken,
        );
        expect(refused.status).toBe(400);
        expect(refused.json()).toEqual(problemDetails(['name']));
      }
      const removed = await call(
        t,
        'DELETE',
        `${PASSKEYS}/${passkey.id}`,
        undefined,
        other.accessToken,
      );
      expect(removed.json()).toEqual(errorBody(404, NOT_FOUND));
    });

    it('should delete the passkeys with the account', async () => {
      const user = await registerUser(t);
      await addPasskey(t, user, new SoftwareAuthenticator(RP_ID, ORIGIN));

      const deleted = await call(t, 'DELETE', ME, { password: user.password }, user.accessToken);

      expect(deleted.status).toBe(200);
      const rows = await t.database.query('SELECT "id" FROM "passkeys" WHERE "userId" = $1', [
        user.id,
      ]);
      expect(rows).toEqual([]);
    });

    it('should answer generated bodies on every passkey route with a documented shape, never a 500', async () => {
      const user = await registerUser(t);
      const passkey = await addPasskey(t, user, new SoftwareAuthenticator(RP_ID, ORIGIN));
      const value = fc.oneof(
        fc.string({ maxLength: 40 }),
        fc.string({ unit: 'binary', maxLength: 40 }),
        fc.integer(),
        fc.constant(null),
        fc.array(fc.string(), { maxLength: 2 }),
        fc.dictionary(
          fc.constantFrom(
            'clientDataJSON',
            'attestationObject',
            'authenticatorData',
            'signature',
            'userHandle',
            'transports',
          ),
          fc.oneof(fc.string({ maxLength: 20 }), fc.base64String({ maxLength: 40 }), fc.integer()),
        ),
      );
      const body = fc.dictionary(
        fc.constantFrom('response', 'name', 'password', 'passkey', 'id', 'rawId', 'type'),
        fc.oneof(
          value,
          fc.record({
            id: fc.base64String({ maxLength: 20 }),
            rawId: fc.base64String({ maxLength: 20 }),
            type: fc.constantFrom('public-key', 'x'),
            response: value,
          }),
        ),
        { maxKeys: 4 },
      );
      const routes: Array<[string, string, string | undefined]> = [
        ['POST', PASSKEY_REGISTER_OPTIONS, user.accessToken],
        ['POST', PASSKEY_REGISTER_VERIFY, user.accessToken],
        ['PATCH', `${PASSKEYS}/${passkey.id}`, user.accessToken],
        ['POST', PASSKEY_LOGIN_VERIFY, undefined],
        ['POST', LOGIN, undefined],
      ];
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...routes), body, async ([method, path, token], sent) => {
          const response = await call(t, method, path, sent, token);
          const json = response.json<Record<string, unknown>>();
          const keys = Object.keys(json).sort().join(',');
          expect(response.status).toBeLessThan(500);
          expect([
            'message,status,timestamp',
            'errors,status,title,type',
            'createdAt,id,isBackedUp,isBackupEligible,lastUsedAt,name,transports',
            'attestation,authenticatorSelection,challenge,excludeCredentials,extensions,hints,pubKeyCredParams,rp,timeout,user',
          ]).toContain(keys);
        }),
        { numRuns: 60 },
      );
    });
  });
});

// The admin CLI spawns its own process on the real clock: the database is shared with the app.
describe('users:passkeys-remove', () => {
  jest.setTimeout(60_000);
  const t = useSharedTestApp(() => ({
    clock: new FakeClock(new Date()),
    environment: { Passkeys__RpId: RP_ID, Passkeys__Origins: ORIGIN },
  }));

  it('should remove every passkey of the account, which then signs in nowhere, and record it', async () => {
    const user = await registerUser(t);
    const authenticator = new SoftwareAuthenticator(RP_ID, ORIGIN);
    await addPasskey(t, user, authenticator);
    await addPasskey(t, user, authenticator);
    const cwd = mkdtempSync(join(tmpdir(), 'keygate-cli-'));
    try {
      const result = await runCliOn(t.database, ['users:passkeys-remove', user.email], cwd);
      const again = await runCliOn(t.database, ['users:passkeys-remove', user.email], cwd);

      expect(result).toEqual({
        code: 0,
        stdout: `Removed 2 passkey(s) of ${user.email} (user ${user.id}).\n`,
        stderr: '',
      });
      expect(again.stdout).toBe(`${user.email} (user ${user.id}) had no passkeys to remove.\n`);
      expect((await passkeyLogin(t, authenticator)).json()).toEqual(
        errorBody(401, UNKNOWN_PASSKEY),
      );
      const rows = (await auditRows(t.database, user.id)).filter(
        (r) => r.type === 'admin_passkeys_removed',
      );
      expect(rows.map((r) => r.details)).toEqual([{ removedCount: 2 }, { removedCount: 0 }]);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
