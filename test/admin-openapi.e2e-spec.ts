import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { OpenAPIObject } from '@nestjs/swagger';
import { AdminKeysService } from '../src/admin/keys/admin-keys.service.js';
import { RandomSource } from '../src/common/random/random-source.js';
import { internalOrigin } from '../src/common/request-origin/request-origin.js';
import { registerUser } from './factories/user.factory.js';
import { useSharedTestApp } from './utils/create-test-app.js';
import { listOperations } from './utils/openapi-contract.js';
import { TYPED_CLIENT_TIMEOUT_MS, useTypedClient } from './utils/typed-client.js';

// The admin API's contract, admin-openapi.json: what the code generates now, the admin routes
// and only them (openapi.json has none of them), and usable as a typed client is used.

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const ADMIN_CONTRACT = join(ROOT, 'admin-openapi.json');
const PUBLIC_CONTRACT = join(ROOT, 'openapi.json');
const GENERATOR = join(ROOT, 'dist', 'openapi.js');
/** Generating the contracts from the built code, on a busy machine. */
const TIMEOUT_MS = 120_000;

const contract = JSON.parse(readFileSync(ADMIN_CONTRACT, 'utf8')) as OpenAPIObject;

describe('admin-openapi.json, the admin API contract', () => {
  it(
    'should equal what `npm run openapi` generates from the code now',
    async () => {
      const cwd = mkdtempSync(join(tmpdir(), 'keygate-admin-openapi-'));
      try {
        await run(
          process.execPath,
          [GENERATOR, join(cwd, 'openapi.json'), join(cwd, 'admin.json')],
          {
            cwd,
            env: {},
            timeout: TIMEOUT_MS - 5_000,
          },
        );
        expect(readFileSync(join(cwd, 'admin.json'), 'utf8')).toBe(
          readFileSync(ADMIN_CONTRACT, 'utf8'),
        );
        expect(readFileSync(join(cwd, 'openapi.json'), 'utf8')).toBe(
          readFileSync(PUBLIC_CONTRACT, 'utf8'),
        );
        expect(readdirSync(cwd).sort()).toEqual(['admin.json', 'openapi.json']);
      } finally {
        rmSync(cwd, { recursive: true, force: true });
      }
    },
    TIMEOUT_MS,
  );

  it('should list exactly the admin routes, each under the admin key scheme, and openapi.json none of them', () => {
    const routes = listOperations(contract).map(({ route }) => route);
    const publicRoutes = listOperations(
      JSON.parse(readFileSync(PUBLIC_CONTRACT, 'utf8')) as OpenAPIObject,
    ).map(({ route }) => route);

    expect(routes.sort()).toEqual(
      [
        'GET /api/admin/users',
        'GET /api/admin/users/{id}',
        'POST /api/admin/users/{id}/deactivate',
        'POST /api/admin/users/{id}/activate',
        'POST /api/admin/users/{id}/unlock',
        'POST /api/admin/users/{id}/logout',
        'POST /api/admin/users/{id}/mfa-reset',
        'POST /api/admin/users/{id}/verify-email',
        'POST /api/admin/users/{id}/passkeys-remove',
        'POST /api/admin/users/{id}/password-reset-mail',
        'DELETE /api/admin/users/{id}',
        'GET /api/admin/users/{id}/sessions',
        'DELETE /api/admin/users/{id}/sessions/{sessionId}',
        // Only with Federation__Providers (x-keygate-requires), as openapi.json's.
        'GET /api/admin/users/{id}/identities',
        'DELETE /api/admin/users/{id}/identities/{identityId}',
        'GET /api/admin/audit',
        'GET /api/admin/audit/export',
        'GET /api/admin/keys',
        'POST /api/admin/keys/rotate',
        'POST /api/admin/keys/{kid}/retire',
        'GET /api/admin/webhooks',
        'POST /api/admin/webhooks',
        'DELETE /api/admin/webhooks/{id}',
        'GET /api/admin/webhooks/dead',
        'POST /api/admin/webhooks/replay',
        // Only with OAuthServer__Enabled (x-keygate-requires), as openapi.json's.
        'GET /api/admin/oauth/clients',
        'POST /api/admin/oauth/clients',
        'DELETE /api/admin/oauth/clients/{clientId}',
        'POST /api/admin/oauth/clients/{clientId}/rotate-secret',
        'GET /api/admin/users/{id}/oauth-grants',
        'GET /api/admin/oauth/consent-requests/{challenge}',
        'POST /api/admin/oauth/consent-requests/{challenge}/approve',
        'POST /api/admin/oauth/consent-requests/{challenge}/deny',
      ].sort(),
    );
    for (const { operation } of listOperations(contract)) {
      expect(operation.security).toEqual([{ adminKey: [] }]);
      expect(Object.keys(operation.responses)).toEqual(
        expect.arrayContaining(['401', '403', '404', '500']),
      );
    }
    expect(publicRoutes.filter((route) => route.includes('/api/admin'))).toEqual([]);
  });

  describe('a client generated from it', () => {
    const t = useSharedTestApp();
    const client = useTypedClient('typed-admin-client');

    it(
      'should type-check and drive the support tool of the issue: find by e-mail, end the sessions, be refused anything else',
      async () => {
        const user = await registerUser(t);
        const keys = t.app.get(AdminKeysService);
        const origin = internalOrigin('cli', t.app.get(RandomSource));
        const support = await keys.create('support-tool', ['users:read', 'sessions:write'], origin);
        const auditor = await keys.create('auditor', ['audit:read'], origin);

        const stdout = await client.generateCheckAndRun(
          'admin-openapi.json',
          'keygate-admin.d.ts',
          [t.baseUrl, support.secret, user.email, auditor.secret],
        );

        expect(JSON.parse(stdout)).toEqual({
          find: { status: 200, count: 1, isActive: true },
          details: { status: 200, activeSessionCount: 1 },
          logout: { status: 200, revokedSessions: 1 },
          deactivate: {
            status: 403,
            message: 'La clave de administración no tiene el permiso necesario.',
          },
          audit: { status: 200, keys: ['support-tool'] },
        });
      },
      TYPED_CLIENT_TIMEOUT_MS,
    );
  });
});
