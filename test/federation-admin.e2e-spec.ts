import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdminKeysService } from '../src/admin/keys/admin-keys.service.js';
import { RandomSource } from '../src/common/random/random-source.js';
import { internalOrigin } from '../src/common/request-origin/request-origin.js';
import { FederatedIdentity } from '../src/federation/entities/federated-identity.entity.js';
import { NO_PASSWORD_HASH } from '../src/passwords/password-hasher.js';
import { WebhookDelivery } from '../src/webhooks/entities/webhook-delivery.entity.js';
import { createUser, registerUser } from './factories/user.factory.js';
import { auditRows } from './utils/audit-rows.js';
import { runCliOn } from './utils/cli-process.js';
import { useSharedTestApp, type TestApp, type TestResponse } from './utils/create-test-app.js';
import { errorBody, problemDetails } from './utils/expected-bodies.js';
import { ADMIN_USERS, ADMIN_WEBHOOKS } from './utils/routes.js';

// Issue 38: an operator lists and removes an account's linked identities, over the admin API
// (`/api/admin/users/{id}/identities`) and the CLI (`users:identities`, `users:unlink-identity`);
// both exist only while Federation__Providers names a provider. No provider is reached here: the
// identities are rows, as a sign-in would have written them (test/federation.e2e-spec.ts).

const FEDERATION: Readonly<Record<string, string>> = {
  Federation__Providers: JSON.stringify([
    { id: 'gh', name: 'GitHub', type: 'github', clientId: 'keygate', clientSecret: 'TOPSECRET' },
  ]),
  Federation__PublicUrl: 'https://id.example.com',
  Federation__RedirectUrls: 'https://app.example.com/back',
  Webhooks__EncryptionKeys: Buffer.alloc(32, 0x5a).toString('base64'),
  Webhooks__AllowPrivateDestinations: 'true',
};
const FORBIDDEN_BODY = errorBody(403, 'La clave de administración no tiene el permiso necesario.');
const USER_NOT_FOUND = errorBody(404, 'Usuario no encontrado.');
const IDENTITY_NOT_FOUND = errorBody(404, 'Identidad vinculada no encontrada.');
const NOT_CONFIGURED =
  'keygate-cli: federation is not configured (Federation__Providers is not set): accounts have no linked identities.\n';

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
  key: string,
  body?: unknown,
): Promise<TestResponse> {
  body ??= method === 'GET' ? undefined : {};
  return t.request(path, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** An identity row as a provider sign-in writes it. */
async function linkIdentity(
  t: TestApp,
  userId: string,
  subject: string,
  linkedAt: Date,
): Promise<FederatedIdentity> {
  const identity = Object.assign(new FederatedIdentity(), {
    id: randomUUID(),
    userId,
    provider: 'gh',
    issuer: 'https://github.com',
    subject,
    email: `${subject}@example.com`,
    linkedAt,
    lastUsedAt: null,
  });
  await t.dataSource.getRepository(FederatedIdentity).insert(identity);
  return identity;
}

const identitiesPath = (userId: string) => `${ADMIN_USERS}/${userId}/identities`;

describe('admin identities while federation is off (the default)', () => {
  const t = useSharedTestApp();

  it('should answer both routes as unknown routes, whatever the key', async () => {
    const key = await createKey(t, ['users:read', 'users:write']);
    const user = await registerUser(t);
    const unknown = await call(t, 'GET', '/api/admin/nothing-here', key);

    const list = await call(t, 'GET', identitiesPath(user.id), key);
    const remove = await call(t, 'DELETE', `${identitiesPath(user.id)}/${randomUUID()}`, key);

    expect(unknown.status).toBe(404);
    for (const response of [list, remove]) {
      expect({ status: response.status, body: response.json() }).toEqual({
        status: 404,
        body: unknown.json(),
      });
    }
  });

  it('should say in the CLI that federation is not configured, exit code 2 as a usage error', async () => {
    const user = await registerUser(t);
    const cwd = mkdtempSync(join(tmpdir(), 'keygate-cli-'));
    try {
      const list = await runCliOn(t.database, ['users:identities', user.email], cwd);
      const unlink = await runCliOn(
        t.database,
        ['users:unlink-identity', user.email, randomUUID()],
        cwd,
      );
      expect(list).toEqual({ code: 2, stdout: '', stderr: NOT_CONFIGURED });
      expect(unlink).toEqual({ code: 2, stdout: '', stderr: NOT_CONFIGURED });
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});

describe('admin identities while federation is configured', () => {
  const t = useSharedTestApp(() => ({ environment: FEDERATION }));

  it('should list an account’s identities with users:read, as its owner sees them', async () => {
    const reader = await createKey(t, ['users:read']);
    const writer = await createKey(t, ['users:write']);
    const user = await registerUser(t);
    const first = await linkIdentity(t, user.id, 'list-1', new Date('2026-01-01T00:00:00.000Z'));
    const second = await linkIdentity(t, user.id, 'list-2', new Date('2026-01-02T00:00:00.000Z'));
    await linkIdentity(t, (await registerUser(t)).id, 'list-other', new Date());

    const listed = await call(t, 'GET', identitiesPath(user.id), reader);
    const ownView = await t.get('/api/auth/identities', user.accessToken);
    const withoutScope = await call(t, 'GET', identitiesPath(user.id), writer);
    const unknown = await call(t, 'GET', identitiesPath(randomUUID()), reader);
    const malformed = await call(t, 'GET', identitiesPath('not-a-uuid'), reader);

    expect(listed.status).toBe(200);
    expect(listed.json()).toEqual({
      identities: [first, second].map((identity) => ({
        id: identity.id,
        provider: 'gh',
        subject: identity.subject,
        email: `${identity.subject}@example.com`,
        linkedAt: identity.linkedAt.toISOString(),
        lastUsedAt: null,
      })),
    });
    expect(listed.json()).toEqual(ownView.json());
    expect({ status: withoutScope.status, body: withoutScope.json() }).toEqual({
      status: 403,
      body: FORBIDDEN_BODY,
    });
    expect({ status: unknown.status, body: unknown.json() }).toEqual({
      status: 404,
      body: USER_NOT_FOUND,
    });
    expect({ status: malformed.status, body: malformed.json() }).toEqual({
      status: 400,
      body: problemDetails(['id']),
    });
  });

  it('should unlink one identity with users:write, audited with the key and reason, with its webhook', async () => {
    const hooks = await createKey(t, ['webhooks:write']);
    const subscribed = await call(t, 'POST', ADMIN_WEBHOOKS, hooks, {
      url: 'https://hooks.example.com/identities',
      events: ['federation_identity_unlinked'],
    });
    expect(subscribed.status).toBe(201);
    const writer = await createKey(t, ['users:write'], 'support-desk');
    const reader = await createKey(t, ['users:read']);
    const user = await registerUser(t);
    const other = await registerUser(t);
    const kept = await linkIdentity(t, user.id, 'unlink-1', new Date('2026-01-01T00:00:00.000Z'));
    const removed = await linkIdentity(
      t,
      user.id,
      'unlink-2',
      new Date('2026-01-02T00:00:00.000Z'),
    );
    const foreign = await linkIdentity(t, other.id, 'unlink-3', new Date());

    const withoutScope = await call(
      t,
      'DELETE',
      `${identitiesPath(user.id)}/${removed.id}`,
      reader,
    );
    const unlinked = await call(t, 'DELETE', `${identitiesPath(user.id)}/${removed.id}`, writer, {
      reason: 'Proveedor comprometido',
    });
    const again = await call(t, 'DELETE', `${identitiesPath(user.id)}/${removed.id}`, writer);
    const ofAnother = await call(t, 'DELETE', `${identitiesPath(user.id)}/${foreign.id}`, writer);
    const unknownUser = await call(
      t,
      'DELETE',
      `${identitiesPath(randomUUID())}/${removed.id}`,
      writer,
    );
    const malformed = await call(t, 'DELETE', `${identitiesPath(user.id)}/nope`, writer);

    expect({ status: withoutScope.status, body: withoutScope.json() }).toEqual({
      status: 403,
      body: FORBIDDEN_BODY,
    });
    expect({ status: unlinked.status, body: unlinked.json() }).toEqual({
      status: 200,
      body: { userId: user.id, changed: true },
    });
    expect({ status: again.status, body: again.json() }).toEqual({
      status: 404,
      body: IDENTITY_NOT_FOUND,
    });
    expect({ status: ofAnother.status, body: ofAnother.json() }).toEqual({
      status: 404,
      body: IDENTITY_NOT_FOUND,
    });
    expect({ status: unknownUser.status, body: unknownUser.json() }).toEqual({
      status: 404,
      body: USER_NOT_FOUND,
    });
    expect({ status: malformed.status, body: malformed.json() }).toEqual({
      status: 400,
      body: problemDetails(['identityId']),
    });
    const left = await t.dataSource.getRepository(FederatedIdentity).findBy({ userId: user.id });
    expect(left.map((identity) => identity.id)).toEqual([kept.id]);
    expect(await t.dataSource.getRepository(FederatedIdentity).countBy({ id: foreign.id })).toBe(1);
    const rows = (await auditRows(t.database, user.id)).filter(
      (row) => row.type === 'federation_identity_unlinked',
    );
    expect(rows.map((row) => row.details)).toEqual([
      {
        provider: 'gh',
        identityId: removed.id,
        adminKeyId: expect.any(String),
        adminKeyName: 'support-desk',
        reason: 'Proveedor comprometido',
      },
    ]);
    const deliveries = await t.dataSource
      .getRepository(WebhookDelivery)
      .findBy({ type: 'federation_identity_unlinked', accountId: user.id });
    expect(deliveries).toHaveLength(1);
  });

  it('should let an operator remove the last way to sign in (the owner’s own unlink refuses it)', async () => {
    const writer = await createKey(t, ['users:write']);
    const user = await createUser(t, {
      passwordHash: NO_PASSWORD_HASH,
      emailVerifiedAt: new Date(),
    });
    const only = await linkIdentity(t, user.id, 'last-1', new Date());

    const unlinked = await call(t, 'DELETE', `${identitiesPath(user.id)}/${only.id}`, writer);

    expect({ status: unlinked.status, body: unlinked.json() }).toEqual({
      status: 200,
      body: { userId: user.id, changed: true },
    });
    expect(await t.dataSource.getRepository(FederatedIdentity).countBy({ userId: user.id })).toBe(
      0,
    );
  });

  it('should list and unlink from the CLI, audited as the CLI', async () => {
    const user = await registerUser(t);
    const identity = await linkIdentity(t, user.id, 'cli-1', new Date('2026-03-01T10:00:00.000Z'));
    const cwd = mkdtempSync(join(tmpdir(), 'keygate-cli-'));
    try {
      const listed = await runCliOn(t.database, ['users:identities', user.email], cwd, FEDERATION);
      const unlinked = await runCliOn(
        t.database,
        ['users:unlink-identity', user.email, identity.id],
        cwd,
        FEDERATION,
      );
      const again = await runCliOn(
        t.database,
        ['users:unlink-identity', user.email, identity.id],
        cwd,
        FEDERATION,
      );
      const empty = await runCliOn(t.database, ['users:identities', user.email], cwd, FEDERATION);
      const missing = await runCliOn(
        t.database,
        ['users:unlink-identity', user.email],
        cwd,
        FEDERATION,
      );

      const name = `${user.email} (user ${user.id})`;
      expect(listed).toEqual({
        code: 0,
        stdout:
          `Identities linked to ${name}: 1, oldest first.\n` +
          `${identity.id}  gh  subject=cli-1  email=cli-1@example.com  ` +
          'linked 2026-03-01T10:00:00.000Z  last used never\n',
        stderr: '',
      });
      expect(unlinked).toEqual({
        code: 0,
        stdout: `Unlinked identity ${identity.id} (gh) from ${name}; its sessions stay.\n`,
        stderr: '',
      });
      expect(again).toEqual({
        code: 1,
        stdout: '',
        stderr: 'keygate-cli: users:unlink-identity failed: Identidad vinculada no encontrada.\n',
      });
      expect(empty.stdout).toBe(`${name} has no linked identities.\n`);
      expect(missing).toEqual({
        code: 2,
        stdout: '',
        stderr:
          'keygate-cli: users:unlink-identity is missing an argument: users:unlink-identity <email> <identityId>\n' +
          'Run with --help to see the commands.\n',
      });
      const rows = (await auditRows(t.database, user.id)).filter(
        (row) => row.type === 'federation_identity_unlinked',
      );
      expect(rows.map((row) => row.details)).toEqual([{ provider: 'gh', identityId: identity.id }]);
      expect(rows[0].ip).toBe('cli');
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
