import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdminKeysService } from '../src/admin/keys/admin-keys.service.js';
import { RandomSource } from '../src/common/random/random-source.js';
import { digestOpaqueToken } from '../src/common/crypto/opaque-token.js';
import { internalOrigin } from '../src/common/request-origin/request-origin.js';
import { OAuthClient } from '../src/oauth-server/entities/oauth-client.entity.js';
import { OAuthClientsService } from '../src/oauth-server/oauth-clients.service.js';
import { runCliOn } from './utils/cli-process.js';
import {
  createTestApp,
  useTestApp,
  type TestApp,
  type TestResponse,
} from './utils/create-test-app.js';
import { errorBody, problemDetails } from './utils/expected-bodies.js';
import { asymmetricSigning } from './utils/signing-keys.js';

// Issue 39, part 1: the OpenID provider's settings and its clients (admin API and CLI), on
// SQLite and (npm run test:pg) PostgreSQL. Enabling it needs Node 22 or later: run on Node 26.

const CLIENTS = '/api/admin/oauth/clients';
const NOT_FOUND_BODY = errorBody(404, 'Not Found');
const FORBIDDEN_BODY = errorBody(403, 'La clave de administración no tiene el permiso necesario.');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SECRET = /^kgcs_[A-Za-z0-9_-]{43}$/;

const ENABLED = asymmetricSigning('ES256', {
  OAuthServer__Enabled: 'true',
  OAuthServer__Issuer: 'http://127.0.0.1:3000',
});

async function createKey(t: TestApp, scopes: readonly string[]): Promise<string> {
  const { secret } = await t.app
    .get(AdminKeysService)
    .create(
      `key-${randomUUID().slice(0, 8)}`,
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
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
  }
  return t.request(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

describe('OAuth server: off by default', () => {
  const t = useTestApp({ environment: asymmetricSigning('ES256') });

  it('should serve nothing of the provider, the admin routes of clients included', async () => {
    const key = await createKey(t, ['oauth-clients:read', 'oauth-clients:write']);
    const paths = [
      ['GET', CLIENTS],
      ['POST', CLIENTS],
      ['DELETE', `${CLIENTS}/${randomUUID()}`],
      ['POST', `${CLIENTS}/${randomUUID()}/rotate-secret`],
      ['GET', '/.well-known/openid-configuration'],
      ['GET', '/.well-known/oauth-authorization-server'],
      ['GET', '/oauth/authorize'],
      ['POST', '/oauth/token'],
      ['GET', '/oauth/userinfo'],
      ['GET', '/api/auth/oauth/grants'],
    ] as const;
    for (const [method, path] of paths) {
      const response = await call(t, method, path, key, method === 'GET' ? undefined : {});
      expect({ path, status: response.status, body: response.json() }).toEqual({
        path,
        status: 404,
        body: NOT_FOUND_BODY,
      });
    }
    expect(t.routes.some(({ url }) => url.includes('oauth'))).toBe(false);
  });
});

describe('OAuth server: start-up checks', () => {
  it('should refuse to start with HS256 signing, with a clear message', async () => {
    await expect(
      createTestApp({
        environment: {
          OAuthServer__Enabled: 'true',
          OAuthServer__Issuer: 'https://id.example.com',
        },
      }),
    ).rejects.toThrow(
      'OAuthServer__Enabled=true needs an asymmetric Jwt__SigningAlgorithm (ES256, EdDSA or RS256): applications verify ID tokens with the keys /.well-known/jwks.json publishes, never with the shared HS256 secret',
    );
  });

  it('should refuse to start without an issuer', async () => {
    await expect(
      createTestApp({ environment: asymmetricSigning('ES256', { OAuthServer__Enabled: 'true' }) }),
    ).rejects.toThrow('OAuthServer__Issuer is required when OAuthServer__Enabled=true');
  });
});

describe('OAuth server: clients through the admin API', () => {
  const t = useTestApp({ environment: ENABLED });

  it('should register a confidential client, answer its secret once and store only its digest', async () => {
    const key = await createKey(t, ['oauth-clients:read', 'oauth-clients:write']);
    const added = await call(t, 'POST', CLIENTS, key, {
      name: '<script>alert(1)</script> Grafana',
      redirectUris: ['https://grafana.example.com/login/generic_oauth'],
      postLogoutRedirectUris: ['https://grafana.example.com/'],
      scopes: ['openid', 'email', 'offline_access'],
    });
    expect(added.status).toBe(201);
    const body = added.json<{ clientId: string; clientSecret: string }>();
    expect(body).toEqual({
      clientId: expect.stringMatching(UUID),
      clientSecret: expect.stringMatching(SECRET),
    });

    const rows = await t.dataSource.getRepository(OAuthClient).find();
    expect(rows).toHaveLength(1);
    expect(rows[0].secretDigest).toBe(digestOpaqueToken(body.clientSecret));
    expect(JSON.stringify(rows)).not.toContain(body.clientSecret);

    const listed = await call(t, 'GET', CLIENTS, key);
    expect(listed.status).toBe(200);
    expect(listed.json()).toEqual({
      clients: [
        {
          clientId: body.clientId,
          name: '<script>alert(1)</script> Grafana',
          redirectUris: ['https://grafana.example.com/login/generic_oauth'],
          postLogoutRedirectUris: ['https://grafana.example.com/'],
          public: false,
          scopes: ['openid', 'email', 'offline_access'],
          grantTypes: ['authorization_code'],
          selfRegistered: false,
          createdAt: expect.stringMatching(/Z$/),
        },
      ],
    });
    expect(listed.text).not.toContain('kgcs_');
  });

  it('should register a public client without a secret, with every scope by default', async () => {
    const key = await createKey(t, ['oauth-clients:read', 'oauth-clients:write']);
    const added = await call(t, 'POST', CLIENTS, key, {
      name: 'CLI',
      redirectUris: ['http://127.0.0.1/callback', 'com.example.cli:/callback'],
      public: true,
    });
    expect(added.status).toBe(201);
    expect(added.json()).toEqual({ clientId: expect.stringMatching(UUID) });
    const listed = (await call(t, 'GET', CLIENTS, key)).json<{
      clients: { public: boolean; scopes: string[] }[];
    }>();
    expect(listed.clients[0]).toMatchObject({
      public: true,
      scopes: ['openid', 'profile', 'email', 'offline_access'],
    });
  });

  it.each([
    [
      { name: 'App', redirectUris: ['http://app.example.com/cb'] },
      'Las URI de redirección deben ser absolutas: https, http solo en loopback o un esquema privado con punto; sin usuario, contraseña ni fragmento y de 2048 caracteres como máximo.',
    ],
    [
      { name: 'App', redirectUris: ['https://app.example.com/cb#frag'] },
      'Las URI de redirección deben ser absolutas: https, http solo en loopback o un esquema privado con punto; sin usuario, contraseña ni fragmento y de 2048 caracteres como máximo.',
    ],
    [
      {
        name: 'App',
        redirectUris: ['https://app.example.com/cb'],
        postLogoutRedirectUris: ['javascript:alert(1)'],
      },
      'Las URI de redirección deben ser absolutas: https, http solo en loopback o un esquema privado con punto; sin usuario, contraseña ni fragmento y de 2048 caracteres como máximo.',
    ],
    [
      { name: 'App\u200b', redirectUris: ['https://app.example.com/cb'] },
      'El nombre del cliente debe tener entre 1 y 100 caracteres, sin caracteres de control ni invisibles.',
    ],
    [
      { name: '   ', redirectUris: ['https://app.example.com/cb'] },
      'El nombre del cliente debe tener entre 1 y 100 caracteres, sin caracteres de control ni invisibles.',
    ],
  ])('should refuse %j with 400 and its message', async (body, message) => {
    const key = await createKey(t, ['oauth-clients:write']);
    const response = await call(t, 'POST', CLIENTS, key, body);
    expect({ status: response.status, body: response.json() }).toEqual({
      status: 400,
      body: errorBody(400, message),
    });
    expect(await t.dataSource.getRepository(OAuthClient).count()).toBe(0);
  });

  it.each([
    [{ redirectUris: ['https://a.example.com/cb'] }, ['name']],
    [{ name: 'App', redirectUris: [] }, ['redirectUris']],
    [{ name: 'App', redirectUris: ['https://a.example.com/cb'], scopes: ['admin'] }, ['scopes']],
    [{ name: 'App', redirectUris: ['https://a.example.com/cb'], public: 'yes' }, ['public']],
  ])('should refuse the malformed body %j with problem details', async (body, fields) => {
    const key = await createKey(t, ['oauth-clients:write']);
    const response = await call(t, 'POST', CLIENTS, key, body);
    expect(response.status).toBe(400);
    expect(response.json()).toEqual(problemDetails(fields));
  });

  it('should register device and service clients by grant type, without redirect URIs', async () => {
    const key = await createKey(t, ['oauth-clients:read', 'oauth-clients:write']);
    const device = await call(t, 'POST', CLIENTS, key, {
      name: 'Deploy CLI',
      public: true,
      grantTypes: ['device_code'],
    });
    expect(device.status).toBe(201);
    expect(device.json()).toEqual({ clientId: expect.stringMatching(UUID) });
    const service = await call(t, 'POST', CLIENTS, key, {
      name: 'Billing',
      redirectUris: [],
      grantTypes: ['client_credentials', 'device_code'],
    });
    expect(service.status).toBe(201);
    expect(service.json()).toEqual({
      clientId: expect.stringMatching(UUID),
      clientSecret: expect.stringMatching(SECRET),
    });
    const listed = (await call(t, 'GET', CLIENTS, key)).json<{
      clients: { name: string; redirectUris: string[]; grantTypes: string[] }[];
    }>();
    // Both were made at the same instant: the list orders them by id then, so by name here.
    expect(
      listed.clients
        .map(({ name, redirectUris, grantTypes }) => ({ name, redirectUris, grantTypes }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    ).toEqual([
      { name: 'Billing', redirectUris: [], grantTypes: ['device_code', 'client_credentials'] },
      { name: 'Deploy CLI', redirectUris: [], grantTypes: ['device_code'] },
    ]);
  });

  it.each([
    [
      { name: 'Svc', public: true, grantTypes: ['client_credentials'] },
      'Un cliente público no puede usar client_credentials: solo los clientes confidenciales tienen credenciales.',
    ],
    [
      {
        name: 'Svc',
        redirectUris: ['https://svc.example.com/cb'],
        grantTypes: ['client_credentials'],
      },
      'Solo un cliente con authorization_code tiene URI de redirección.',
    ],
  ])('should refuse the grant types of %j with 400 and its message', async (body, message) => {
    const key = await createKey(t, ['oauth-clients:write']);
    const response = await call(t, 'POST', CLIENTS, key, body);
    expect({ status: response.status, body: response.json() }).toEqual({
      status: 400,
      body: errorBody(400, message),
    });
    expect(await t.dataSource.getRepository(OAuthClient).count()).toBe(0);
  });

  it.each([
    [{ name: 'App', grantTypes: ['implicit'] }, ['grantTypes']],
    [{ name: 'App', grantTypes: [] }, ['grantTypes']],
    [{ name: 'App', grantTypes: ['authorization_code'] }, ['redirectUris']],
  ])('should refuse the malformed grant types %j with problem details', async (body, fields) => {
    const key = await createKey(t, ['oauth-clients:write']);
    const response = await call(t, 'POST', CLIENTS, key, body);
    expect(response.status).toBe(400);
    expect(response.json()).toEqual(problemDetails(fields));
  });

  it('should rotate a confidential client secret, refuse it for a public one, and remove clients', async () => {
    const key = await createKey(t, ['oauth-clients:read', 'oauth-clients:write']);
    const confidential = (
      await call(t, 'POST', CLIENTS, key, { name: 'A', redirectUris: ['https://a.example.com/cb'] })
    ).json<{ clientId: string; clientSecret: string }>();
    const rotated = await call(t, 'POST', `${CLIENTS}/${confidential.clientId}/rotate-secret`, key);
    expect(rotated.status).toBe(200);
    const fresh = rotated.json<{ clientId: string; clientSecret: string }>();
    expect(fresh).toEqual({
      clientId: confidential.clientId,
      clientSecret: expect.stringMatching(SECRET),
    });
    expect(fresh.clientSecret).not.toBe(confidential.clientSecret);
    const row = await t.dataSource
      .getRepository(OAuthClient)
      .findOneByOrFail({ id: fresh.clientId });
    expect(row.secretDigest).toBe(digestOpaqueToken(fresh.clientSecret));

    const publicClient = (
      await call(t, 'POST', CLIENTS, key, {
        name: 'P',
        redirectUris: ['https://p.example.com/cb'],
        public: true,
      })
    ).json<{ clientId: string }>();
    const refused = await call(t, 'POST', `${CLIENTS}/${publicClient.clientId}/rotate-secret`, key);
    expect({ status: refused.status, body: refused.json() }).toEqual({
      status: 409,
      body: errorBody(409, 'Un cliente público no tiene secreto que renovar.'),
    });

    const removed = await call(t, 'DELETE', `${CLIENTS}/${confidential.clientId}`, key);
    expect(removed.status).toBe(204);
    const again = await call(t, 'DELETE', `${CLIENTS}/${confidential.clientId}`, key);
    expect({ status: again.status, body: again.json() }).toEqual({
      status: 404,
      body: errorBody(404, 'Cliente OAuth no encontrado.'),
    });
    const unknown = await call(t, 'POST', `${CLIENTS}/${randomUUID()}/rotate-secret`, key);
    expect({ status: unknown.status, body: unknown.json() }).toEqual({
      status: 404,
      body: errorBody(404, 'Cliente OAuth no encontrado.'),
    });
    const malformed = await call(t, 'DELETE', `${CLIENTS}/not-a-uuid`, key);
    expect(malformed.json()).toEqual(problemDetails(['clientId']));
  });

  it('should need oauth-clients:read to list and oauth-clients:write to change', async () => {
    const reader = await createKey(t, ['oauth-clients:read']);
    const writer = await createKey(t, ['oauth-clients:write']);
    const other = await createKey(t, ['webhooks:read', 'webhooks:write', 'users:write']);
    const id = randomUUID();
    const cases: [string, string, string, unknown][] = [
      ['GET', CLIENTS, writer, undefined],
      ['GET', CLIENTS, other, undefined],
      ['POST', CLIENTS, reader, { name: 'A', redirectUris: ['https://a.example.com/cb'] }],
      ['DELETE', `${CLIENTS}/${id}`, reader, undefined],
      ['POST', `${CLIENTS}/${id}/rotate-secret`, other, undefined],
    ];
    for (const [method, path, key, body] of cases) {
      const response = await call(t, method, path, key, body);
      expect({ method, path, status: response.status, body: response.json() }).toEqual({
        method,
        path,
        status: 403,
        body: FORBIDDEN_BODY,
      });
    }
    expect(await t.dataSource.getRepository(OAuthClient).count()).toBe(0);
  });
});

/** Each CLI call starts a process; on a loaded machine one takes over ten seconds. */
const CLI_TEST_TIMEOUT_MS = 240_000;

describe('OAuth server: clients through the CLI', () => {
  const t = useTestApp({ environment: ENABLED });
  let cwd: string;

  beforeEach(() => {
    cwd = mkdtempSync(join(tmpdir(), 'keygate-oauth-cli-'));
  });

  afterEach(() => {
    rmSync(cwd, { recursive: true, force: true });
  });

  it(
    'should add, list and rotate clients, printing a secret only when made',
    async () => {
      const added = await runCliOn(
        t.database,
        [
          'oauth-clients:add',
          '--name',
          'Intranet',
          '--redirect-uri',
          'https://intranet.example.com/cb',
          '--post-logout-redirect-uri',
          'https://intranet.example.com/',
          '--scopes',
          'openid,profile',
        ],
        cwd,
        ENABLED,
      );
      expect(added.stderr).toBe('');
      expect(added.code).toBe(0);
      const clientId = /client_id: (\S+)/.exec(added.stdout)?.[1] ?? '';
      const secret = /client_secret: (\S+)/.exec(added.stdout)?.[1] ?? '';
      expect(clientId).toMatch(UUID);
      expect(secret).toMatch(SECRET);
      expect(added.stdout).toContain('scopes: openid profile\n');

      const listed = await runCliOn(t.database, ['oauth-clients:list'], cwd, ENABLED);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toContain(`${clientId}  confidential  `);
      expect(listed.stdout).toContain('name="Intranet"');
      expect(listed.stdout).not.toContain('kgcs_');

      const rotated = await runCliOn(
        t.database,
        ['oauth-clients:rotate-secret', clientId],
        cwd,
        ENABLED,
      );
      expect(rotated.code).toBe(0);
      const fresh = /client_secret: (\S+)/.exec(rotated.stdout)?.[1] ?? '';
      expect(fresh).toMatch(SECRET);
      expect(fresh).not.toBe(secret);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'should add a service client with --grant and no redirect URI',
    async () => {
      const added = await runCliOn(
        t.database,
        ['oauth-clients:add', '--name', 'Billing', '--grant', 'client_credentials'],
        cwd,
        ENABLED,
      );
      expect(added.stderr).toBe('');
      expect(added.code).toBe(0);
      expect(added.stdout).toContain('redirect_uris: -\n');
      expect(added.stdout).toContain('grant_types: client_credentials\n');
      expect(added.stdout).toMatch(/client_secret: kgcs_/);
      const listed = await runCliOn(t.database, ['oauth-clients:list'], cwd, ENABLED);
      expect(listed.stdout).toContain('grant_types=client_credentials');
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'should remove a client once, and fail with the message when it is gone',
    async () => {
      const { clientId } = await t.app
        .get(OAuthClientsService)
        .add({ name: 'Old', redirectUris: ['https://old.example.com/cb'] });
      const removed = await runCliOn(t.database, ['oauth-clients:remove', clientId], cwd, ENABLED);
      expect({ code: removed.code, stdout: removed.stdout }).toEqual({
        code: 0,
        stdout: `Removed OAuth client ${clientId}.\n`,
      });
      const missing = await runCliOn(t.database, ['oauth-clients:remove', clientId], cwd, ENABLED);
      expect({ code: missing.code, stderr: missing.stderr }).toEqual({
        code: 1,
        stderr: 'keygate-cli: oauth-clients:remove failed: Cliente OAuth no encontrado.\n',
      });
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'should refuse a public client asking for a secret and a redirect URI off loopback over http',
    async () => {
      const refused = await runCliOn(
        t.database,
        ['oauth-clients:add', '--name', 'X', '--redirect-uri', 'http://x.example.com/cb'],
        cwd,
        ENABLED,
      );
      expect({ code: refused.code, stderr: refused.stderr }).toEqual({
        code: 1,
        stderr:
          'keygate-cli: oauth-clients:add failed: Las URI de redirección deben ser absolutas: https, http solo en loopback o un esquema privado con punto; sin usuario, contraseña ni fragmento y de 2048 caracteres como máximo.\n',
      });
      const added = await runCliOn(
        t.database,
        ['oauth-clients:add', '--public', '--name', 'Y', '--redirect-uri', 'http://127.0.0.1/cb'],
        cwd,
        ENABLED,
      );
      expect(added.code).toBe(0);
      expect(added.stdout).not.toContain('client_secret');
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
