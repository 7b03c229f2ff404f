import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdminKeysService } from '../src/admin/keys/admin-keys.service.js';
import { RandomSource } from '../src/common/random/random-source.js';
import { internalOrigin } from '../src/common/request-origin/request-origin.js';
import { KeygateMetrics } from '../src/metrics/keygate-metrics.js';
import { ManagementServer } from '../src/metrics/management-server.js';
import { TotpFactor } from '../src/two-factor/entities/totp-factor.entity.js';
import { Passkey } from '../src/passkeys/entities/passkey.entity.js';
import { WebhookDelivery } from '../src/webhooks/entities/webhook-delivery.entity.js';
import { registerUser, reloadUser, type RegisteredUser } from './factories/user.factory.js';
import {
  createTestApp,
  useTestApp,
  type TestApp,
  type TestResponse,
} from './utils/create-test-app.js';
import { errorBody, problemDetails, UNAUTHORIZED_BODY } from './utils/expected-bodies.js';
import { runCliOn } from './utils/cli-process.js';
import { asymmetricSigning } from './utils/signing-keys.js';
import { httpRequest } from './utils/http.js';
import {
  ADMIN_AUDIT,
  ADMIN_AUDIT_EXPORT,
  ADMIN_KEYS,
  ADMIN_KEYS_ROTATE,
  ADMIN_USERS,
  ADMIN_WEBHOOKS,
  ADMIN_WEBHOOKS_DEAD,
  ADMIN_WEBHOOKS_REPLAY,
  LOGIN,
  ME,
  REFRESH,
} from './utils/routes.js';

// The admin HTTP API (issue 28) over real HTTP, on SQLite and (npm run test:pg) PostgreSQL.

const ALL_SCOPES = [
  'users:read',
  'users:write',
  'sessions:write',
  'audit:read',
  'keys:read',
  'keys:write',
  'webhooks:read',
  'webhooks:write',
] as const;
type Scope = (typeof ALL_SCOPES)[number];

const FORBIDDEN_BODY = errorBody(403, 'La clave de administración no tiene el permiso necesario.');
const NOT_FOUND_BODY = errorBody(404, 'Not Found');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function createKey(t: TestApp, scopes: readonly string[], name?: string): Promise<string> {
  const { secret } = await t.app
    .get(AdminKeysService)
    .create(
      name ?? `key-${randomUUID().slice(0, 8)}`,
      scopes,
      internalOrigin('cli', t.app.get(RandomSource)),
    );
  return secret;
}

function call(
  t: TestApp,
  method: string,
  path: string,
  key?: string,
  body?: unknown,
): Promise<TestResponse> {
  const headers: Record<string, string> =
    key === undefined ? {} : { authorization: `Bearer ${key}` };
  // A change takes a JSON object, `{}` when no reason is given (the edge's rule for bodies).
  body ??= method === 'GET' ? undefined : {};
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
  }
  return t.request(path, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
}

interface Route {
  readonly method: string;
  readonly path: (userId: string) => string;
  readonly scope: Scope;
  /** What a key with exactly the scope gets, when it is a refusal (the test app signs with HS256). */
  readonly allowed?: { readonly status: number; readonly body: unknown };
}

/** Every admin route and the one scope it needs. */
const ROUTES: readonly Route[] = [
  { method: 'GET', path: () => ADMIN_USERS, scope: 'users:read' },
  { method: 'GET', path: (id) => `${ADMIN_USERS}/${id}`, scope: 'users:read' },
  { method: 'GET', path: (id) => `${ADMIN_USERS}/${id}/sessions`, scope: 'users:read' },
  { method: 'POST', path: (id) => `${ADMIN_USERS}/${id}/deactivate`, scope: 'users:write' },
  { method: 'POST', path: (id) => `${ADMIN_USERS}/${id}/activate`, scope: 'users:write' },
  { method: 'POST', path: (id) => `${ADMIN_USERS}/${id}/unlock`, scope: 'users:write' },
  { method: 'POST', path: (id) => `${ADMIN_USERS}/${id}/mfa-reset`, scope: 'users:write' },
  { method: 'POST', path: (id) => `${ADMIN_USERS}/${id}/verify-email`, scope: 'users:write' },
  { method: 'POST', path: (id) => `${ADMIN_USERS}/${id}/passkeys-remove`, scope: 'users:write' },
  {
    method: 'POST',
    path: (id) => `${ADMIN_USERS}/${id}/password-reset-mail`,
    scope: 'users:write',
  },
  { method: 'DELETE', path: (id) => `${ADMIN_USERS}/${id}`, scope: 'users:write' },
  { method: 'POST', path: (id) => `${ADMIN_USERS}/${id}/logout`, scope: 'sessions:write' },
  {
    method: 'DELETE',
    path: (id) => `${ADMIN_USERS}/${id}/sessions/${randomUUID()}`,
    scope: 'sessions:write',
  },
  { method: 'GET', path: () => ADMIN_AUDIT, scope: 'audit:read' },
  { method: 'GET', path: () => ADMIN_AUDIT_EXPORT, scope: 'audit:read' },
  { method: 'GET', path: () => ADMIN_KEYS, scope: 'keys:read' },
  {
    method: 'POST',
    path: () => ADMIN_KEYS_ROTATE,
    scope: 'keys:write',
    allowed: {
      status: 400,
      body: errorBody(
        400,
        'Las claves de firma necesitan un algoritmo asimétrico en Jwt__SigningAlgorithm.',
      ),
    },
  },
  {
    method: 'POST',
    path: () => `${ADMIN_KEYS}/unknown-kid/retire`,
    scope: 'keys:write',
    allowed: { status: 404, body: errorBody(404, 'Clave de firma no encontrada.') },
  },
  { method: 'GET', path: () => ADMIN_WEBHOOKS, scope: 'webhooks:read' },
  { method: 'GET', path: () => ADMIN_WEBHOOKS_DEAD, scope: 'webhooks:read' },
  {
    method: 'POST',
    path: () => ADMIN_WEBHOOKS,
    scope: 'webhooks:write',
    allowed: { status: 400, body: problemDetails(['url', 'events']) },
  },
  {
    method: 'DELETE',
    path: () => `${ADMIN_WEBHOOKS}/${randomUUID()}`,
    scope: 'webhooks:write',
    allowed: { status: 404, body: errorBody(404, 'Suscripción de webhook no encontrada.') },
  },
  {
    method: 'POST',
    path: () => ADMIN_WEBHOOKS_REPLAY,
    scope: 'webhooks:write',
    allowed: { status: 400, body: problemDetails(['id', 'all']) },
  },
];

const ROUTE_NAMES = ROUTES.map((route) => [`${route.method} ${route.path(':id')}`, route] as const);

describe('admin API', () => {
  const t = useTestApp();

  describe('who may call it', () => {
    it('should answer 404, as an unknown route, while no admin key exists, and again once every key is revoked', async () => {
      const user = await registerUser(t);
      const unknownRoute = await call(t, 'GET', '/api/nothing-here');
      for (const [, route] of ROUTE_NAMES) {
        const response = await call(t, route.method, route.path(user.id));
        expect({ status: response.status, body: response.json() }).toEqual({
          status: 404,
          body: NOT_FOUND_BODY,
        });
      }
      expect(unknownRoute.json()).toEqual(NOT_FOUND_BODY);

      await createKey(t, ['users:read'], 'only-one');
      expect((await call(t, 'GET', ADMIN_USERS)).json()).toEqual(UNAUTHORIZED_BODY);

      await t.app
        .get(AdminKeysService)
        .revoke('only-one', internalOrigin('cli', t.app.get(RandomSource)));
      const afterRevocation = await call(t, 'GET', ADMIN_USERS);
      expect({ status: afterRevocation.status, body: afterRevocation.json() }).toEqual({
        status: 404,
        body: NOT_FOUND_BODY,
      });
    });

    it.each(ROUTE_NAMES)(
      'should refuse %s to a key without its scope (403) and to no key (401)',
      async (_name, route) => {
        const user = await registerUser(t);
        const others = ALL_SCOPES.filter((scope) => scope !== route.scope);
        const key = await createKey(t, others);

        const refused = await call(t, route.method, route.path(user.id), key);
        const anonymous = await call(t, route.method, route.path(user.id));

        expect({ status: refused.status, body: refused.json() }).toEqual({
          status: 403,
          body: FORBIDDEN_BODY,
        });
        expect({ status: anonymous.status, body: anonymous.json() }).toEqual({
          status: 401,
          body: UNAUTHORIZED_BODY,
        });
        // Nothing was changed by the refused call.
        expect((await reloadUser(t, user.id)).isActive).toBe(true);
      },
    );

    it.each(ROUTE_NAMES)(
      'should let %s through to a key with exactly its scope',
      async (_name, route) => {
        const user = await registerUser(t);
        const key = await createKey(t, [route.scope]);
        const response = await call(t, route.method, route.path(user.id), key);
        if (route.allowed !== undefined) {
          expect({ status: response.status, body: response.json() }).toEqual(route.allowed);
          return;
        }
        // 503: password-reset-mail without mail configured; 404: the made-up session id.
        expect([200, 202, 404, 503]).toContain(response.status);
        expect(response.status === 404 ? response.json() : {}).toEqual(
          response.status === 404 ? errorBody(404, 'Sesión no encontrada.') : {},
        );
      },
    );

    it('should never open an admin route with an access token, nor an account route with an admin key', async () => {
      const user = await registerUser(t);
      const key = await createKey(t, [...ALL_SCOPES]);

      const withAccessToken = await call(t, 'GET', ADMIN_USERS, user.accessToken);
      const meWithKey = await t.get(ME, key);

      expect({ status: withAccessToken.status, body: withAccessToken.json() }).toEqual({
        status: 401,
        body: UNAUTHORIZED_BODY,
      });
      expect({ status: meWithKey.status, body: meWithKey.json() }).toEqual({
        status: 401,
        body: UNAUTHORIZED_BODY,
      });
    });

    it('should refuse a revoked key, a key with a character changed, and a key in another scheme', async () => {
      const key = await createKey(t, ['users:read'], 'to-revoke');
      await createKey(t, ['users:read'], 'stays');
      expect((await call(t, 'GET', ADMIN_USERS, key)).status).toBe(200);

      const changed = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
      const basic = await t.request(ADMIN_USERS, { headers: { authorization: `Basic ${key}` } });
      await t.app
        .get(AdminKeysService)
        .revoke('to-revoke', internalOrigin('cli', t.app.get(RandomSource)));
      const revoked = await call(t, 'GET', ADMIN_USERS, key);

      for (const response of [revoked, await call(t, 'GET', ADMIN_USERS, changed), basic]) {
        expect({ status: response.status, body: response.json() }).toEqual({
          status: 401,
          body: UNAUTHORIZED_BODY,
        });
      }
    });
  });

  describe('the support tool of the issue (users:read sessions:write)', () => {
    it('should find an account by e-mail and end its sessions, change nothing else, and leave the key and reason in the trail', async () => {
      const user = await registerUser(t);
      const support = await createKey(t, ['users:read', 'sessions:write'], 'support-tool');
      const auditor = await createKey(t, ['audit:read'], 'auditor');

      const found = await call(
        t,
        'GET',
        `${ADMIN_USERS}?email=${encodeURIComponent(` ${user.email.toUpperCase()} `)}`,
        support,
      );
      expect(found.status).toBe(200);
      const { users } = found.json<{ users: { id: string }[] }>();
      expect(users.map((u) => u.id)).toEqual([user.id]);

      const loggedOut = await call(t, 'POST', `${ADMIN_USERS}/${user.id}/logout`, support, {
        reason: 'Ticket 4711: lost phone',
      });
      expect({ status: loggedOut.status, body: loggedOut.json() }).toEqual({
        status: 200,
        body: { userId: user.id, changed: true, revokedSessions: 1 },
      });
      expect((await t.post(REFRESH, { refreshToken: user.refreshToken })).status).toBe(401);

      for (const path of ['deactivate', 'unlock', 'mfa-reset', 'verify-email']) {
        const response = await call(t, 'POST', `${ADMIN_USERS}/${user.id}/${path}`, support, {});
        expect({ path, status: response.status, body: response.json() }).toEqual({
          path,
          status: 403,
          body: FORBIDDEN_BODY,
        });
      }
      expect((await call(t, 'DELETE', `${ADMIN_USERS}/${user.id}`, support)).status).toBe(403);
      expect((await reloadUser(t, user.id)).isActive).toBe(true);

      const trail = await call(
        t,
        'GET',
        `${ADMIN_AUDIT}?userId=${user.id}&type=admin_sessions_revoked`,
        auditor,
      );
      expect(trail.json()).toEqual({
        events: [
          expect.objectContaining({
            type: 'admin_sessions_revoked',
            userId: user.id,
            details: {
              revokedTokenCount: 1,
              adminKeyId: expect.stringMatching(UUID),
              adminKeyName: 'support-tool',
              reason: 'Ticket 4711: lost phone',
            },
          }),
        ],
        nextCursor: null,
      });
      expect(trail.text).not.toContain(support);
    });
  });

  describe('accounts', () => {
    let key: string;
    beforeEach(async () => {
      key = await createKey(t, [...ALL_SCOPES], 'operator');
    });

    it('should show one account with its lockout, factors, session count and last login, and 404 an unknown one', async () => {
      const user = await registerUser(t);
      await t.post(LOGIN, { email: user.email, password: 'Wrong!pass1' });

      const shown = await call(t, 'GET', `${ADMIN_USERS}/${user.id}`, key);
      const unknown = await call(t, 'GET', `${ADMIN_USERS}/${randomUUID()}`, key);
      const notAnId = await call(t, 'GET', `${ADMIN_USERS}/not-a-uuid`, key);

      expect(shown.json()).toEqual({
        id: user.id,
        username: user.username,
        email: user.email,
        isActive: true,
        emailVerifiedAt: null,
        createdAt: expect.any(String),
        lastLoginAt: null,
        failedLoginAttempts: 1,
        lockoutEnd: null,
        isLockedOut: false,
        factors: [],
        activeSessionCount: 1,
      });
      expect({ status: unknown.status, body: unknown.json() }).toEqual({
        status: 404,
        body: errorBody(404, 'Usuario no encontrado.'),
      });
      expect({ status: notAnId.status, body: notAnId.json() }).toEqual({
        status: 400,
        body: problemDetails(['id']),
      });
    });

    it('should deactivate (ending every session), activate, and record both with the key', async () => {
      const user = await registerUser(t);
      const deactivated = await call(t, 'POST', `${ADMIN_USERS}/${user.id}/deactivate`, key, {
        reason: 'Fraud review',
      });
      const again = await call(t, 'POST', `${ADMIN_USERS}/${user.id}/deactivate`, key);
      const login = await t.post(LOGIN, { email: user.email, password: user.password });
      const activated = await call(t, 'POST', `${ADMIN_USERS}/${user.id}/activate`, key, {});

      expect(deactivated.json()).toEqual({ userId: user.id, changed: true, revokedSessions: 1 });
      expect(again.json()).toEqual({ userId: user.id, changed: false, revokedSessions: 0 });
      expect({ status: login.status, body: login.json() }).toEqual({
        status: 401,
        body: errorBody(401, 'Cuenta desactivada.'),
      });
      expect(activated.json()).toEqual({ userId: user.id, changed: true });
      expect((await t.post(LOGIN, { email: user.email, password: user.password })).status).toBe(
        200,
      );
      const trail = await call(
        t,
        'GET',
        `${ADMIN_AUDIT}?userId=${user.id}&type=admin_user_deactivated`,
        key,
      );
      expect(trail.json<{ events: { details: unknown }[] }>().events.map((e) => e.details)).toEqual(
        [
          {
            changed: false,
            adminKeyId: expect.any(String),
            adminKeyName: 'operator',
            reason: null,
          },
          {
            changed: true,
            adminKeyId: expect.any(String),
            adminKeyName: 'operator',
            reason: 'Fraud review',
          },
        ],
      );
    });

    it('should unlock a locked-out account', async () => {
      const user = await registerUser(t);
      for (let i = 0; i < 5; i += 1) {
        await t.post(LOGIN, { email: user.email, password: 'Wrong!pass1' });
      }
      const locked = await call(t, 'GET', `${ADMIN_USERS}?state=locked`, key);
      const unlocked = await call(t, 'POST', `${ADMIN_USERS}/${user.id}/unlock`, key, {});
      const nothingLeft = await call(t, 'POST', `${ADMIN_USERS}/${user.id}/unlock`, key, {});

      expect(locked.json<{ users: { id: string }[] }>().users.map((u) => u.id)).toEqual([user.id]);
      expect(unlocked.json()).toEqual({ userId: user.id, changed: true });
      expect(nothingLeft.json()).toEqual({ userId: user.id, changed: false });
      expect((await t.post(LOGIN, { email: user.email, password: user.password })).status).toBe(
        200,
      );
    });

    it('should mark the e-mail verified, reset a missing second factor as no change, and refuse a reset mail without mail (503)', async () => {
      const user = await registerUser(t);
      const verified = await call(t, 'POST', `${ADMIN_USERS}/${user.id}/verify-email`, key, {});
      const verifiedAgain = await call(
        t,
        'POST',
        `${ADMIN_USERS}/${user.id}/verify-email`,
        key,
        {},
      );
      const mfa = await call(t, 'POST', `${ADMIN_USERS}/${user.id}/mfa-reset`, key, {});
      const mail = await call(t, 'POST', `${ADMIN_USERS}/${user.id}/password-reset-mail`, key, {});

      expect(verified.json()).toEqual({ userId: user.id, changed: true });
      expect(verifiedAgain.json()).toEqual({ userId: user.id, changed: false });
      expect((await reloadUser(t, user.id)).emailVerifiedAt).toEqual(expect.any(Date));
      expect(mfa.json()).toEqual({ userId: user.id, changed: false });
      expect({ status: mail.status, body: mail.json() }).toEqual({
        status: 503,
        body: errorBody(503, 'El envío de correos no está configurado.'),
      });
    });

    it('should show a confirmed second factor, list the account under state=mfa, and reset it', async () => {
      const user = await registerUser(t);
      await registerUser(t);
      // The factor as a confirmed enrolment leaves it (its secret is never read here).
      await t.dataSource.getRepository(TotpFactor).insert({
        userId: user.id,
        sealedSecret: 'v1.test.unused',
        createdAt: t.clock.now(),
        confirmedAt: t.clock.now(),
        lastUsedStep: null,
      });

      const shown = await call(t, 'GET', `${ADMIN_USERS}/${user.id}`, key);
      const withMfa = await call(t, 'GET', `${ADMIN_USERS}?state=mfa`, key);
      const reset = await call(t, 'POST', `${ADMIN_USERS}/${user.id}/mfa-reset`, key, {
        reason: 'Lost phone, identity checked',
      });
      const after = await call(t, 'GET', `${ADMIN_USERS}/${user.id}`, key);

      expect(shown.json<{ factors: unknown }>().factors).toEqual([
        { kind: 'totp', isConfirmed: true, createdAt: t.clock.now().toISOString() },
      ]);
      expect(withMfa.json<{ users: { id: string }[] }>().users.map((u) => u.id)).toEqual([user.id]);
      expect(reset.json()).toEqual({ userId: user.id, changed: true });
      expect(after.json<{ factors: unknown }>().factors).toEqual([]);
      expect((await call(t, 'GET', `${ADMIN_USERS}?state=mfa`, key)).json()).toEqual({
        users: [],
        nextCursor: null,
      });
    });

    it('should show the passkeys among the factors, without credential or key, and remove them all with the key and reason in the trail', async () => {
      const user = await registerUser(t);
      const other = await registerUser(t);
      const used = new Date(t.clock.now().getTime() + 60_000);
      const passkeyOf = (userId: string, id: string, name: string, lastUsedAt: Date | null) => ({
        id,
        userId,
        credentialId: `credential-${id}`,
        publicKey: 'pQECAyYgASFYIA',
        counter: 0,
        transports: 'internal',
        isBackupEligible: true,
        isBackedUp: lastUsedAt !== null,
        name,
        createdAt: t.clock.now(),
        lastUsedAt,
      });
      const [first, second, others] = [randomUUID(), randomUUID(), randomUUID()];
      await t.dataSource
        .getRepository(Passkey)
        .insert([
          passkeyOf(user.id, first, 'Laptop', used),
          passkeyOf(user.id, second, 'Phone', null),
          passkeyOf(other.id, others, 'Other', null),
        ]);

      const shown = await call(t, 'GET', `${ADMIN_USERS}/${user.id}`, key);
      const removed = await call(t, 'POST', `${ADMIN_USERS}/${user.id}/passkeys-remove`, key, {
        reason: 'Stolen laptop',
      });
      const again = await call(t, 'POST', `${ADMIN_USERS}/${user.id}/passkeys-remove`, key);
      const after = await call(t, 'GET', `${ADMIN_USERS}/${user.id}`, key);
      const unknown = await call(t, 'POST', `${ADMIN_USERS}/${randomUUID()}/passkeys-remove`, key);
      const trail = await call(
        t,
        'GET',
        `${ADMIN_AUDIT}?userId=${user.id}&type=admin_passkeys_removed`,
        key,
      );

      const created = t.clock.now().toISOString();
      const passkeyFactors = shown
        .json<{ factors: { id?: string }[] }>()
        .factors.sort((a, b) => (a.id === first ? -1 : b.id === first ? 1 : 0));
      expect({ status: shown.status, factors: passkeyFactors }).toEqual({
        status: 200,
        factors: [
          {
            kind: 'passkey',
            isConfirmed: true,
            createdAt: created,
            id: first,
            name: 'Laptop',
            lastUsedAt: used.toISOString(),
            isBackupEligible: true,
            isBackedUp: true,
          },
          {
            kind: 'passkey',
            isConfirmed: true,
            createdAt: created,
            id: second,
            name: 'Phone',
            lastUsedAt: null,
            isBackupEligible: true,
            isBackedUp: false,
          },
        ],
      });
      expect(shown.text).not.toContain('credential-');
      expect(shown.text).not.toContain('pQECAyYgASFYIA');
      expect([
        { status: removed.status, body: removed.json() },
        { status: again.status, body: again.json() },
        { status: unknown.status, body: unknown.json() },
      ]).toEqual([
        { status: 200, body: { userId: user.id, changed: true, removedPasskeys: 2 } },
        { status: 200, body: { userId: user.id, changed: false, removedPasskeys: 0 } },
        { status: 404, body: errorBody(404, 'Usuario no encontrado.') },
      ]);
      expect(after.json<{ factors: unknown }>().factors).toEqual([]);
      expect(await t.dataSource.getRepository(Passkey).countBy({ userId: other.id })).toBe(1);
      expect(trail.json<{ events: { details: unknown }[] }>().events.map((e) => e.details)).toEqual(
        [
          {
            removedCount: 0,
            adminKeyId: expect.any(String),
            adminKeyName: 'operator',
            reason: null,
          },
          {
            removedCount: 2,
            adminKeyId: expect.any(String),
            adminKeyName: 'operator',
            reason: 'Stolen laptop',
          },
        ],
      );
    });

    it('should delete an account; it is unknown afterwards', async () => {
      const user = await registerUser(t);
      const deleted = await call(t, 'DELETE', `${ADMIN_USERS}/${user.id}`, key, {
        reason: 'GDPR request',
      });
      const again = await call(t, 'DELETE', `${ADMIN_USERS}/${user.id}`, key);

      expect(deleted.json()).toEqual({ userId: user.id, changed: true });
      expect({ status: again.status, body: again.json() }).toEqual({
        status: 404,
        body: errorBody(404, 'Usuario no encontrado.'),
      });
      expect((await t.get(ME, user.accessToken)).status).toBe(404);
    });

    it('should list accounts a page at a time in a stable order, by state and by e-mail prefix', async () => {
      const prefix = `page-${randomUUID().slice(0, 6)}`;
      const users: RegisteredUser[] = [];
      for (let i = 0; i < 5; i += 1) {
        users.push(await registerUser(t, { email: `${prefix}-${i}@example.com` }));
      }
      await registerUser(t);
      await call(t, 'POST', `${ADMIN_USERS}/${users[1].id}/deactivate`, key);

      const byPrefix: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const query: string = `emailPrefix=${prefix.toUpperCase()}&limit=2${cursor === null ? '' : `&cursor=${cursor}`}`;
        const page = await call(t, 'GET', `${ADMIN_USERS}?${query}`, key);
        const body = page.json<{ users: { email: string }[]; nextCursor: string | null }>();
        byPrefix.push(...body.users.map((u) => u.email));
        cursor = body.nextCursor;
        pages += 1;
      } while (cursor !== null);
      expect(byPrefix).toEqual(users.map((u) => u.email));
      expect(pages).toBe(3);

      const all: string[] = [];
      cursor = null;
      do {
        const page = await call(
          t,
          'GET',
          `${ADMIN_USERS}?limit=4${cursor === null ? '' : `&cursor=${cursor}`}`,
          key,
        );
        const body = page.json<{ users: { id: string }[]; nextCursor: string | null }>();
        all.push(...body.users.map((u) => u.id));
        cursor = body.nextCursor;
      } while (cursor !== null);
      expect(all).toEqual([...all].sort());
      expect(new Set(all).size).toBe(6);

      const deactivated = await call(t, 'GET', `${ADMIN_USERS}?state=deactivated`, key);
      const unverified = await call(
        t,
        'GET',
        `${ADMIN_USERS}?state=unverified&emailPrefix=${prefix}`,
        key,
      );
      const mfa = await call(t, 'GET', `${ADMIN_USERS}?state=mfa`, key);
      expect(deactivated.json<{ users: { id: string }[] }>().users.map((u) => u.id)).toEqual([
        users[1].id,
      ]);
      expect(unverified.json<{ users: unknown[] }>().users).toHaveLength(5);
      expect(mfa.json()).toEqual({ users: [], nextCursor: null });
    });

    it.each<[string, string, Record<string, unknown>]>([
      ['a limit above 100', 'limit=101', problemDetails(['limit'])],
      ['a limit of 0', 'limit=0', problemDetails(['limit'])],
      ['an unknown state', 'state=asleep', problemDetails(['state'])],
      ['two e-mails', 'email=a@example.com&email=b@example.com', problemDetails(['email'])],
      ['a control character', 'emailPrefix=a%07b', problemDetails(['emailPrefix'])],
      ['an empty prefix', 'emailPrefix=', problemDetails(['emailPrefix'])],
      ['an empty e-mail', 'email=', problemDetails(['email'])],
      ['a prefix ending in U+FFFF', 'emailPrefix=a%EF%BF%BF', problemDetails(['emailPrefix'])],
      ['a NUL byte', 'email=a%00b@example.com', problemDetails(['email'])],
      ['a forged cursor', 'cursor=bm90LWEtY3Vyc29y', errorBody(400, 'El cursor no es válido.')],
      [
        'an e-mail cursor on the id order',
        `cursor=${Buffer.from('email:a@x').toString('base64url')}`,
        errorBody(400, 'El cursor no es válido.'),
      ],
      [
        'mfa with a prefix',
        'state=mfa&emailPrefix=a',
        errorBody(400, 'El filtro state=mfa no se combina con emailPrefix.'),
      ],
    ])('should answer %s with 400', async (_name, query, body) => {
      const response = await call(t, 'GET', `${ADMIN_USERS}?${query}`, key);
      expect({ status: response.status, body: response.json() }).toEqual({ status: 400, body });
    });

    it.each<[string, unknown]>([
      ['a reason longer than 500 characters', { reason: 'x'.repeat(501) }],
      ['a reason with a line break', { reason: 'one\ntwo' }],
      ['a reason with an invisible character', { reason: 'a\u200bb' }],
      ['a reason that is not a string', { reason: 42 }],
    ])('should refuse %s with 400 problem details', async (_name, body) => {
      const user = await registerUser(t);
      const response = await call(t, 'POST', `${ADMIN_USERS}/${user.id}/deactivate`, key, body);
      expect({ status: response.status, body: response.json() }).toEqual({
        status: 400,
        body: problemDetails(['reason']),
      });
      expect((await reloadUser(t, user.id)).isActive).toBe(true);
    });
  });

  describe('sessions', () => {
    it("should list an account's sessions and end one; another account's session is unknown", async () => {
      const key = await createKey(t, ['users:read', 'sessions:write']);
      const user = await registerUser(t);
      const other = await registerUser(t);
      const second = (await t.post(LOGIN, { email: user.email, password: user.password })).json<{
        refreshToken: string;
      }>();

      const listed = await call(t, 'GET', `${ADMIN_USERS}/${user.id}/sessions`, key);
      const sessions = listed.json<{ sessions: { id: string }[] }>().sessions;
      expect(listed.json()).toEqual({
        userId: user.id,
        sessions: [0, 1].map(() => ({
          id: expect.stringMatching(UUID),
          createdAt: expect.any(String),
          lastUsedAt: expect.any(String),
          ip: expect.any(String),
          userAgent: 'node',
        })),
      });
      const otherSession = (await call(t, 'GET', `${ADMIN_USERS}/${other.id}/sessions`, key)).json<{
        sessions: { id: string }[];
      }>().sessions[0].id;

      const ended = await call(
        t,
        'DELETE',
        `${ADMIN_USERS}/${user.id}/sessions/${sessions[0].id}`,
        key,
      );
      const endedAgain = await call(
        t,
        'DELETE',
        `${ADMIN_USERS}/${user.id}/sessions/${sessions[0].id}`,
        key,
      );
      const foreign = await call(
        t,
        'DELETE',
        `${ADMIN_USERS}/${user.id}/sessions/${otherSession}`,
        key,
      );

      expect(ended.json()).toEqual({ userId: user.id, changed: true, revokedSessions: 1 });
      expect(endedAgain.json()).toEqual({ userId: user.id, changed: false, revokedSessions: 0 });
      expect({ status: foreign.status, body: foreign.json() }).toEqual({
        status: 404,
        body: errorBody(404, 'Sesión no encontrada.'),
      });
      const left = (await call(t, 'GET', `${ADMIN_USERS}/${user.id}/sessions`, key)).json<{
        sessions: { id: string }[];
      }>().sessions;
      expect(left.map((s) => s.id)).toEqual([sessions[1].id]);
      const refreshes = await Promise.all(
        [user.refreshToken, second.refreshToken].map(
          async (token) => (await t.post(REFRESH, { refreshToken: token })).status,
        ),
      );
      expect(refreshes.sort()).toEqual([200, 401]);
    });
  });

  describe('audit', () => {
    it('should page through events by account, type and time range, newest first, and export them as JSON Lines', async () => {
      const key = await createKey(t, ['audit:read'], 'auditor');
      const user = await registerUser(t);
      for (let i = 0; i < 3; i += 1) {
        await t.post(LOGIN, { email: user.email, password: 'Wrong!pass1' });
      }

      const first = await call(
        t,
        'GET',
        `${ADMIN_AUDIT}?userId=${user.id}&type=login_failed&limit=2`,
        key,
      );
      const firstBody = first.json<{ events: { id: string }[]; nextCursor: string }>();
      const second = await call(
        t,
        'GET',
        `${ADMIN_AUDIT}?userId=${user.id}&type=login_failed&limit=2&cursor=${firstBody.nextCursor}`,
        key,
      );
      const secondBody = second.json<{ events: { id: string }[]; nextCursor: string | null }>();
      const all = await call(t, 'GET', `${ADMIN_AUDIT}?userId=${user.id}`, key);
      const farFuture = await call(
        t,
        'GET',
        `${ADMIN_AUDIT}?userId=${user.id}&from=2020-01-01T00:00:00Z&to=9999-12-31T23:59:59Z`,
        key,
      );
      expect(farFuture.json<{ events: unknown[] }>().events).toHaveLength(4);
      const future = await call(
        t,
        'GET',
        `${ADMIN_AUDIT}?userId=${user.id}&from=2999-01-01T00:00:00Z`,
        key,
      );
      const past = await call(
        t,
        'GET',
        `${ADMIN_AUDIT}?userId=${user.id}&to=2000-01-01T00:00:00Z`,
        key,
      );

      expect(firstBody.events).toHaveLength(2);
      expect(secondBody.events).toHaveLength(1);
      expect(secondBody.nextCursor).toBeNull();
      const ids = [...firstBody.events, ...secondBody.events].map((e) => e.id);
      expect(ids).toEqual([...ids].sort().reverse());
      expect(all.json<{ events: { type: string }[] }>().events.map((e) => e.type)).toEqual([
        'login_failed',
        'login_failed',
        'login_failed',
        'registered',
      ]);
      expect(future.json()).toEqual({ events: [], nextCursor: null });
      expect(past.json()).toEqual({ events: [], nextCursor: null });

      const exported = await call(t, 'GET', `${ADMIN_AUDIT_EXPORT}?userId=${user.id}`, key);
      expect(exported.status).toBe(200);
      expect(exported.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
      const lines = exported.text
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as { id: string });
      // The export is recorded before its first line, so it is the newest event it exports.
      expect(lines.map((line) => (line as unknown as { type: string }).type)[0]).toBe(
        'admin_audit_export_started',
      );
      expect(lines.slice(1)).toEqual(all.json<{ events: unknown[] }>().events);

      const recorded = await call(t, 'GET', `${ADMIN_AUDIT}?type=admin_audit_export_started`, key);
      expect(
        recorded.json<{ events: { details: unknown }[] }>().events.map((e) => e.details),
      ).toEqual([
        {
          eventType: null,
          from: null,
          to: null,
          adminKeyId: expect.any(String),
          adminKeyName: 'auditor',
          reason: null,
        },
      ]);
    });

    it.each<[string, string, Record<string, unknown>]>([
      ['a user id that is not a UUID', 'userId=42', problemDetails(['userId'])],
      ['a type with capitals', 'type=LOGIN', problemDetails(['type'])],
      ['a from that is no instant', 'from=yesterday', problemDetails(['from'])],
      ['a cursor that is no event id', 'cursor=abc', errorBody(400, 'El cursor no es válido.')],
      ['a NUL byte in the type', 'type=login%00', problemDetails(['type'])],
    ])('should answer %s with 400', async (_name, query, body) => {
      const key = await createKey(t, ['audit:read']);
      const response = await call(t, 'GET', `${ADMIN_AUDIT}?${query}`, key);
      expect({ status: response.status, body: response.json() }).toEqual({ status: 400, body });
    });
  });

  describe('race', () => {
    it('should end two admins deactivating and activating one account in one state, with no session after an acknowledged deactivation', async () => {
      const key = await createKey(t, ['users:write', 'users:read']);
      const user = await registerUser(t);
      for (let round = 0; round < 6; round += 1) {
        const logins = Array.from({ length: 2 }, () =>
          t.post(LOGIN, { email: user.email, password: user.password }),
        );
        const [deactivated, activated] = await Promise.all([
          call(t, 'POST', `${ADMIN_USERS}/${user.id}/deactivate`, key),
          call(t, 'POST', `${ADMIN_USERS}/${user.id}/activate`, key),
          ...logins,
        ]);
        expect([deactivated.status, activated.status]).toEqual([200, 200]);
        // The deactivation was acknowledged; if it is the state the account ended in, no
        // session may be left.
        const state = await reloadUser(t, user.id);
        const sessions = (await call(t, 'GET', `${ADMIN_USERS}/${user.id}/sessions`, key)).json<{
          sessions: unknown[];
        }>().sessions;
        if (!state.isActive) {
          expect(sessions).toEqual([]);
        }
        await call(t, 'POST', `${ADMIN_USERS}/${user.id}/deactivate`, key);
        expect((await call(t, 'GET', `${ADMIN_USERS}/${user.id}/sessions`, key)).json()).toEqual({
          userId: user.id,
          sessions: [],
        });
        await call(t, 'POST', `${ADMIN_USERS}/${user.id}/activate`, key);
      }
    });
  });

  describe('metrics', () => {
    it('should count every admin call by route and outcome', async () => {
      const key = await createKey(t, ['users:read']);
      await call(t, 'GET', ADMIN_USERS, key);
      await call(t, 'GET', ADMIN_USERS);
      await call(t, 'GET', ADMIN_AUDIT, key);
      await call(t, 'GET', `${ADMIN_USERS}?limit=0`, key);

      const counted = (await t.app.get(KeygateMetrics).adminApiRequests.get()).values
        .filter((value) => value.value > 0)
        .map((value) => ({ ...value.labels, count: value.value }));
      expect(counted).toEqual(
        expect.arrayContaining([
          { route: '/api/admin/users', outcome: 'ok', count: 1 },
          { route: '/api/admin/users', outcome: 'unauthorized', count: 1 },
          { route: '/api/admin/users', outcome: 'bad_request', count: 1 },
          { route: '/api/admin/audit', outcome: 'forbidden', count: 1 },
        ]),
      );
      expect(counted).toHaveLength(4);
    });
  });
});

describe('admin API on the management listener (AdminApi__Listener=management)', () => {
  it('should serve /api/admin/ on the management port only, and 404 it on the public one', async () => {
    const app = await createTestApp({ environment: { AdminApi__Listener: 'management' } });
    try {
      const key = await createKey(app, ['users:read']);
      const address = app.app.get(ManagementServer).address;
      const management = `http://127.0.0.1:${address?.port}`;
      const headers = { authorization: `Bearer ${key}` };

      const onPublic = await app.request(ADMIN_USERS, { headers });
      const onManagement = await httpRequest(management, ADMIN_USERS, { headers });
      const metricsStill = await httpRequest(management, '/metrics', {});
      const anonymous = await httpRequest(management, ADMIN_USERS, {});

      expect({ status: onPublic.status, body: onPublic.json() }).toEqual({
        status: 404,
        body: NOT_FOUND_BODY,
      });
      expect(onManagement.status).toBe(200);
      expect(onManagement.json()).toEqual({ users: [], nextCursor: null });
      expect(metricsStill.status).toBe(200);
      expect(anonymous.json()).toEqual(UNAUTHORIZED_BODY);
    } finally {
      await app.close();
    }
  });

  it('should refuse to start with the management listener off', async () => {
    await expect(
      createTestApp({
        environment: { AdminApi__Listener: 'management', Management__Enabled: 'false' },
      }),
    ).rejects.toThrow('AdminApi__Listener=management needs Management__Enabled=true');
  });

  it("should 404 the management port's admin paths in the default setting", async () => {
    const app = await createTestApp();
    try {
      const key = await createKey(app, ['users:read']);
      const management = `http://127.0.0.1:${app.app.get(ManagementServer).address?.port}`;
      const response = await httpRequest(management, ADMIN_USERS, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(response.status).toBe(404);
      expect(
        (await app.request(ADMIN_USERS, { headers: { authorization: `Bearer ${key}` } })).status,
      ).toBe(200);
    } finally {
      await app.close();
    }
  });
});

describe('admin-keys commands of the CLI', () => {
  const t = useTestApp();
  let cwd: string;
  beforeEach(() => {
    cwd = mkdtempSync(join(tmpdir(), 'keygate-admin-keys-'));
  });
  afterEach(() => {
    rmSync(cwd, { recursive: true, force: true });
  });

  it('should create a key that opens its scopes, list it without its secret, and revoke it', async () => {
    const created = await runCliOn(
      t.database,
      ['admin-keys:create', '--name', 'support-tool', '--scopes', 'users:read,sessions:write'],
      cwd,
    );
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
    const lines = created.stdout.trimEnd().split('\n');
    expect(lines.slice(0, 2)).toEqual([
      expect.stringMatching(
        /^Created admin key support-tool \([0-9a-f-]{36}\) with scopes users:read, sessions:write\.$/,
      ),
      'Its secret follows; it is not stored and cannot be shown again:',
    ]);
    const secret = lines[2];
    expect(secret).toMatch(/^kga_[A-Za-z0-9_-]{43}$/);

    expect((await call(t, 'GET', ADMIN_USERS, secret)).status).toBe(200);
    expect((await call(t, 'GET', ADMIN_AUDIT, secret)).json()).toEqual(FORBIDDEN_BODY);

    const listed = await runCliOn(t.database, ['admin-keys:list'], cwd);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(
      /^support-tool {2}[0-9a-f-]{36} {2}scopes users:read,sessions:write {2}created \S+ {2}active\n$/,
    );
    expect(listed.stdout).not.toContain(secret.slice(4));

    const taken = await runCliOn(
      t.database,
      ['admin-keys:create', '--name', 'support-tool', '--scopes', 'audit:read'],
      cwd,
    );
    expect({ code: taken.code, stderr: taken.stderr }).toEqual({
      code: 1,
      stderr:
        'keygate-cli: admin-keys:create failed: An admin key named support-tool exists already (names are never reused).\n',
    });

    const revoked = await runCliOn(t.database, ['admin-keys:revoke', 'support-tool'], cwd);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(
      /^Revoked admin key support-tool \([0-9a-f-]{36}\); it opens nothing from now on\.\n$/,
    );
    // No key left: the admin API is gone again.
    expect((await call(t, 'GET', ADMIN_USERS, secret)).json()).toEqual(NOT_FOUND_BODY);
  });

  it('should refuse an unknown scope with exit code 1 and create nothing', async () => {
    const refused = await runCliOn(
      t.database,
      ['admin-keys:create', '--name', 'x', '--scopes', 'users:read,root'],
      cwd,
    );
    expect({ code: refused.code, stdout: refused.stdout, stderr: refused.stderr }).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'keygate-cli: admin-keys:create failed: Unknown scope "root"; the scopes are users:read, users:write, sessions:write, audit:read, keys:read, keys:write, webhooks:read, webhooks:write, oauth-clients:read, oauth-clients:write, oauth-consents:read, oauth-consents:write.\n',
    });
    expect((await runCliOn(t.database, ['admin-keys:list'], cwd)).stdout).toBe(
      'No admin keys. Create one with admin-keys:create; until then /api/admin/ answers 404.\n',
    );
  });
});

describe('admin API over the signing keys (Jwt__SigningAlgorithm=ES256)', () => {
  const t = useTestApp({ environment: asymmetricSigning('ES256') });

  it('should list the key set, rotate and retire through the KeysService, with the key and the reason in the trail', async () => {
    const key = await createKey(t, ['keys:read', 'keys:write', 'audit:read'], 'key-operator');

    const listed = await call(t, 'GET', ADMIN_KEYS, key);
    const first = listed.json<{ keys: { kid: string }[] }>().keys[0].kid;
    const secret = listed.json<{ keys: { kid: string }[] }>().keys[1].kid;
    expect({ status: listed.status, body: listed.json() }).toEqual({
      status: 200,
      body: {
        keys: [
          {
            kid: first,
            algorithm: 'ES256',
            source: 'generated',
            state: 'current',
            createdAt: '2026-01-01T00:00:00.000Z',
            activatesAt: '2026-01-01T00:00:00.000Z',
            retiredAt: null,
          },
          {
            kid: secret,
            algorithm: 'HS256',
            source: 'secret',
            state: 'previous',
            createdAt: null,
            activatesAt: null,
            retiredAt: null,
          },
        ],
      },
    });

    const rotated = await call(t, 'POST', ADMIN_KEYS_ROTATE, key, { reason: 'Quarterly rotation' });
    const next = rotated.json<{ kid: string }>().kid;
    expect({ status: rotated.status, body: rotated.json() }).toEqual({
      status: 201,
      body: {
        kid: next,
        algorithm: 'ES256',
        source: 'generated',
        state: 'next',
        createdAt: '2026-01-01T00:00:00.000Z',
        // Keys__JwksMaxAgeSeconds (300) + Keys__RefreshIntervalSeconds (30) after now.
        activatesAt: '2026-01-01T00:05:30.000Z',
        retiredAt: null,
      },
    });
    expect(next).not.toBe(first);

    const again = await call(t, 'POST', ADMIN_KEYS_ROTATE, key);
    expect({ status: again.status, body: again.json() }).toEqual({
      status: 409,
      body: errorBody(409, 'Ya hay una clave de firma siguiente publicada.'),
    });

    const retired = await call(t, 'POST', `${ADMIN_KEYS}/${next}/retire`, key, {
      reason: 'Published by mistake',
    });
    expect({ status: retired.status, body: retired.json() }).toEqual({
      status: 200,
      body: {
        kid: next,
        algorithm: 'ES256',
        source: 'generated',
        state: 'retired',
        createdAt: '2026-01-01T00:00:00.000Z',
        activatesAt: '2026-01-01T00:05:30.000Z',
        retiredAt: '2026-01-01T00:00:00.000Z',
      },
    });

    const twice = await call(t, 'POST', `${ADMIN_KEYS}/${next}/retire`, key);
    const unknown = await call(t, 'POST', `${ADMIN_KEYS}/${'A'.repeat(43)}/retire`, key);
    expect([
      { status: twice.status, body: twice.json() },
      { status: unknown.status, body: unknown.json() },
    ]).toEqual([
      { status: 409, body: errorBody(409, 'La clave de firma ya está retirada.') },
      { status: 404, body: errorBody(404, 'Clave de firma no encontrada.') },
    ]);

    const trail = await call(t, 'GET', `${ADMIN_AUDIT}?type=signing_key_created`, key);
    const retiredTrail = await call(t, 'GET', `${ADMIN_AUDIT}?type=signing_key_retired`, key);
    const details = (response: TestResponse) =>
      response.json<{ events: { details: unknown }[] }>().events.map((e) => e.details);
    // The start-up's key has no actor; the rotation has the admin key and the operator's reason
    // beside its own.
    expect(details(trail)).toEqual([
      {
        kid: next,
        algorithm: 'ES256',
        source: 'generated',
        reason: 'rotation',
        activatesAt: '2026-01-01T00:05:30.000Z',
        adminKeyId: expect.any(String),
        adminKeyName: 'key-operator',
        adminReason: 'Quarterly rotation',
      },
      {
        kid: first,
        algorithm: 'ES256',
        source: 'generated',
        reason: 'no_current_key',
        activatesAt: '2026-01-01T00:00:00.000Z',
      },
    ]);
    expect(details(retiredTrail)).toEqual([
      {
        kid: next,
        algorithm: 'ES256',
        previousState: 'next',
        adminKeyId: expect.any(String),
        adminKeyName: 'key-operator',
        reason: 'Published by mistake',
      },
    ]);
  });

  it('should retire the current key over HTTP and have the next one sign at once', async () => {
    const key = await createKey(t, ['keys:read', 'keys:write']);
    const [{ kid: current }, { kid: secretKid }] = (await call(t, 'GET', ADMIN_KEYS, key)).json<{
      keys: { kid: string }[];
    }>().keys;
    const next = (await call(t, 'POST', ADMIN_KEYS_ROTATE, key)).json<{ kid: string }>().kid;

    const retired = await call(t, 'POST', `${ADMIN_KEYS}/${current}/retire`, key);
    const listed = await call(t, 'GET', ADMIN_KEYS, key);

    expect(retired.status).toBe(200);
    expect(retired.json<{ state: string }>().state).toBe('retired');
    const states = Object.fromEntries(
      listed.json<{ keys: { kid: string; state: string }[] }>().keys.map((k) => [k.kid, k.state]),
    );
    expect(states).toEqual({ [next]: 'current', [current]: 'retired', [secretKid]: 'previous' });
  });

  it.each<[string, string, unknown, Record<string, unknown>]>([
    ['a kid with a dot', 'a.b', {}, problemDetails(['kid'])],
    ['a kid with a NUL byte', 'a%00b', {}, problemDetails(['kid'])],
    ['a kid with a space', 'a%20b', {}, problemDetails(['kid'])],
    ['a reason of 501 characters', 'abc', { reason: 'x'.repeat(501) }, problemDetails(['reason'])],
    [
      'a reason with a control character',
      'abc',
      { reason: 'a\u0007b' },
      problemDetails(['reason']),
    ],
  ])('should refuse %s with 400 problem details', async (_name, kid, body, expected) => {
    const key = await createKey(t, ['keys:write']);
    const response = await call(t, 'POST', `${ADMIN_KEYS}/${kid}/retire`, key, body);
    expect({ status: response.status, body: response.json() }).toEqual({
      status: 400,
      body: expected,
    });
  });
});

describe('admin API over the webhooks', () => {
  const t = useTestApp({
    environment: {
      // The base64 of 32 bytes.
      Webhooks__EncryptionKeys: Buffer.alloc(32, 7).toString('base64'),
    },
  });

  it('should add a subscription answering its secret once, list it without, remove it, and record each change with the key', async () => {
    const key = await createKey(t, ['webhooks:read', 'webhooks:write', 'audit:read'], 'hooks');

    const added = await call(t, 'POST', ADMIN_WEBHOOKS, key, {
      url: 'https://hooks.example.com/keygate',
      events: ['account_deleted', 'registered'],
      reason: 'CRM sync',
    });
    const all = await call(t, 'POST', ADMIN_WEBHOOKS, key, {
      url: 'https://audit.example.com/in',
      events: 'all',
    });
    const id = added.json<{ id: string }>().id;
    const allId = all.json<{ id: string }>().id;
    const created = t.clock.now().toISOString();
    expect({ status: added.status, body: added.json() }).toEqual({
      status: 201,
      body: {
        id: expect.stringMatching(UUID),
        url: 'https://hooks.example.com/keygate',
        // In the catalogue's order, whatever the request's.
        events: ['registered', 'account_deleted'],
        isEnabled: true,
        createdAt: created,
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/=]+$/),
      },
    });
    expect(all.json<{ events: unknown }>().events).toBe('all');

    const listed = await call(t, 'GET', ADMIN_WEBHOOKS, key);
    expect({ status: listed.status, body: listed.json() }).toEqual({
      status: 200,
      body: {
        webhooks: expect.arrayContaining([
          {
            id,
            url: 'https://hooks.example.com/keygate',
            events: ['registered', 'account_deleted'],
            isEnabled: true,
            createdAt: created,
          },
          {
            id: allId,
            url: 'https://audit.example.com/in',
            events: 'all',
            isEnabled: true,
            createdAt: created,
          },
        ]),
      },
    });
    expect(listed.json<{ webhooks: unknown[] }>().webhooks).toHaveLength(2);
    expect(listed.text).not.toContain('whsec_');

    const removed = await call(t, 'DELETE', `${ADMIN_WEBHOOKS}/${id}`, key, { reason: 'CRM gone' });
    const again = await call(t, 'DELETE', `${ADMIN_WEBHOOKS}/${id}`, key);
    expect([
      { status: removed.status, text: removed.text },
      { status: again.status, body: again.json() },
    ]).toEqual([
      { status: 204, text: '' },
      { status: 404, body: errorBody(404, 'Suscripción de webhook no encontrada.') },
    ]);
    expect(
      (await call(t, 'GET', ADMIN_WEBHOOKS, key)).json<{ webhooks: { id: string }[] }>().webhooks,
    ).toEqual([expect.objectContaining({ id: allId })]);

    const details = async (type: string) =>
      (await call(t, 'GET', `${ADMIN_AUDIT}?type=${type}`, key))
        .json<{ events: { details: unknown }[] }>()
        .events.map((e) => e.details);
    expect(await details('admin_webhook_added')).toEqual([
      {
        subscriptionId: allId,
        adminKeyId: expect.any(String),
        adminKeyName: 'hooks',
        reason: null,
      },
      {
        subscriptionId: id,
        adminKeyId: expect.any(String),
        adminKeyName: 'hooks',
        reason: 'CRM sync',
      },
    ]);
    expect(await details('admin_webhook_removed')).toEqual([
      {
        subscriptionId: id,
        adminKeyId: expect.any(String),
        adminKeyName: 'hooks',
        reason: 'CRM gone',
      },
    ]);
  });

  it('should list the dead deliveries and replay one by id, then all', async () => {
    const key = await createKey(t, ['webhooks:read', 'webhooks:write']);
    const subscription = (
      await call(t, 'POST', ADMIN_WEBHOOKS, key, {
        url: 'https://hooks.example.com/a',
        events: 'all',
      })
    ).json<{ id: string }>().id;
    const eventId = '01890a5d-ac96-774b-bcce-b302099a8057';
    const deadId = `msg_${eventId}_${subscription}`;
    await t.dataSource.getRepository(WebhookDelivery).insert({
      id: deadId,
      subscriptionId: subscription,
      eventId,
      type: 'registered',
      accountId: null,
      sessionId: null,
      ip: '203.0.113.9',
      occurredAt: t.clock.now(),
      state: 'dead',
      attempts: 6,
      nextAttemptAt: t.clock.now(),
      claimedBy: null,
      claimedUntil: null,
      finishedAt: t.clock.now(),
      lastError: 'HTTP 500',
    });

    const dead = await call(t, 'GET', ADMIN_WEBHOOKS_DEAD, key);
    const unknown = await call(t, 'POST', ADMIN_WEBHOOKS_REPLAY, key, {
      id: `msg_${eventId}_${randomUUID()}`,
    });
    const replayed = await call(t, 'POST', ADMIN_WEBHOOKS_REPLAY, key, { id: deadId });
    const replayedAll = await call(t, 'POST', ADMIN_WEBHOOKS_REPLAY, key, { all: true });

    expect({ status: dead.status, body: dead.json() }).toEqual({
      status: 200,
      body: {
        deliveries: [
          {
            id: deadId,
            subscriptionId: subscription,
            eventId,
            type: 'registered',
            accountId: null,
            attempts: 6,
            lastError: 'HTTP 500',
            finishedAt: t.clock.now().toISOString(),
          },
        ],
      },
    });
    expect([
      { status: unknown.status, body: unknown.json() },
      { status: replayed.status, body: replayed.json() },
      { status: replayedAll.status, body: replayedAll.json() },
    ]).toEqual([
      { status: 404, body: errorBody(404, 'Entrega de webhook fallida no encontrada.') },
      { status: 200, body: { replayedCount: 1 } },
      { status: 200, body: { replayedCount: 0 } },
    ]);
    expect((await call(t, 'GET', ADMIN_WEBHOOKS_DEAD, key)).json()).toEqual({ deliveries: [] });
  });

  it.each<[string, unknown, Record<string, unknown>]>([
    ['no events', { url: 'https://a.example.com/', events: [] }, problemDetails(['events'])],
    [
      'an unknown event',
      { url: 'https://a.example.com/', events: ['nope'] },
      problemDetails(['events']),
    ],
    [
      'a repeated event',
      { url: 'https://a.example.com/', events: ['registered', 'registered'] },
      problemDetails(['events']),
    ],
    [
      'events as a comma list',
      { url: 'https://a.example.com/', events: 'registered,login' },
      problemDetails(['events']),
    ],
    [
      'a URL with a control character',
      { url: 'https://a.example.com/\u0007', events: 'all' },
      errorBody(
        400,
        'La URL debe ser http o https absoluta, sin usuario, contraseña ni fragmento, de 2048 caracteres como máximo.',
      ),
    ],
    [
      'a URL of 2049 characters',
      { url: `https://a.example.com/${'a'.repeat(2027)}`, events: 'all' },
      errorBody(
        400,
        'La URL debe ser http o https absoluta, sin usuario, contraseña ni fragmento, de 2048 caracteres como máximo.',
      ),
    ],
    ['a URL that is a number', { url: 7, events: 'all' }, problemDetails(['url'])],
    [
      'an ftp URL',
      { url: 'ftp://a.example.com/', events: 'all' },
      errorBody(
        400,
        'La URL debe ser http o https absoluta, sin usuario, contraseña ni fragmento, de 2048 caracteres como máximo.',
      ),
    ],
    [
      'a URL with credentials',
      { url: 'https://u:p@a.example.com/', events: 'all' },
      errorBody(
        400,
        'La URL debe ser http o https absoluta, sin usuario, contraseña ni fragmento, de 2048 caracteres como máximo.',
      ),
    ],
    [
      'a loopback URL',
      { url: 'http://127.0.0.1:8080/', events: 'all' },
      errorBody(
        400,
        'La URL apunta a una dirección privada, de loopback o de enlace local; Webhooks__AllowPrivateDestinations=true la permite.',
      ),
    ],
  ])('should refuse to add a subscription with %s (400)', async (_name, body, expected) => {
    const key = await createKey(t, ['webhooks:read', 'webhooks:write']);
    const response = await call(t, 'POST', ADMIN_WEBHOOKS, key, body);
    expect({ status: response.status, body: response.json() }).toEqual({
      status: 400,
      body: expected,
    });
    expect((await call(t, 'GET', ADMIN_WEBHOOKS, key)).json()).toEqual({ webhooks: [] });
  });

  it.each<[string, unknown, Record<string, unknown>]>([
    ['both id and all', { id: 'msg_x', all: true }, problemDetails(['id', 'all'])],
    ['all: false', { all: false }, problemDetails(['all'])],
    ['a malformed id', { id: 'msg_../../x' }, problemDetails(['id'])],
  ])('should refuse a replay with %s (400)', async (_name, body, expected) => {
    const key = await createKey(t, ['webhooks:write']);
    const response = await call(t, 'POST', ADMIN_WEBHOOKS_REPLAY, key, body);
    expect({ status: response.status, body: response.json() }).toEqual({
      status: 400,
      body: expected,
    });
  });
});
