import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { useSharedTestApp } from './utils/create-test-app.js';

// What a front-end team does with the contract: generate a typed client from openapi.json
// (openapi-typescript + openapi-fetch), type-check its own code against it with tsc, and run it.
// test/typed-client/flow.ts goes through the whole flow, from registration to logout, then
// changes the password and deletes the account.

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const FIXTURE = join(ROOT, 'test', 'typed-client');
const GENERATOR = join(ROOT, 'node_modules', 'openapi-typescript', 'bin', 'cli.js');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
/** Generating, type-checking (tsc on a strict project) and running, on a busy machine. */
const TIMEOUT_MS = 120_000;

describe('A client generated from openapi.json', () => {
  const t = useSharedTestApp();
  let directory: string;

  beforeAll(() => {
    directory = mkdtempSync(join(tmpdir(), 'keygate-typed-client-'));
    symlinkSync(join(ROOT, 'node_modules'), join(directory, 'node_modules'), 'dir');
    writeFileSync(join(directory, 'package.json'), '{ "type": "module", "private": true }\n');
    for (const file of ['flow.ts', 'tsconfig.json']) {
      copyFileSync(join(FIXTURE, file), join(directory, file));
    }
  });

  afterAll(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  it(
    'should type-check and drive register, login, me, refresh, sessions, revoke-all, logout, a password change and the deletion',
    async () => {
      await run(process.execPath, [GENERATOR, join(ROOT, 'openapi.json'), '-o', 'keygate.d.ts'], {
        cwd: directory,
      });
      // Fails, with tsc's errors, when the code does not fit the generated types.
      await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: directory }).catch(
        (error: Error & { stdout?: string }) => {
          throw new Error(`tsc refused the client code:\n${error.stdout ?? error.message}`);
        },
      );

      const { stdout } = await run(process.execPath, [join('out', 'flow.js'), t.baseUrl], {
        cwd: directory,
      });

      expect(JSON.parse(stdout)).toEqual({
        register: { status: 201, email: expect.stringMatching(/^typed-.+@example\.com$/) },
        login: { status: 200, sameUser: true },
        me: { status: 200, username: 'typed' },
        refresh: { status: 200, rotated: true, expiry: true },
        listSessions: { status: 200, count: 2, current: 1 },
        revokeAllSessions: { status: 200, revokedSessions: 1 },
        replay: { status: 401, message: 'Refresh token revocado.' },
        revoke: { status: 200, message: 'Token revocado exitosamente.' },
        refreshAfterLogout: { status: 401, message: 'Refresh token revocado.' },
        changePassword: { status: 200, message: 'Contraseña actualizada exitosamente.' },
        refreshAfterPasswordChange: 200,
        deleteAccount: { status: 200, message: 'Cuenta eliminada exitosamente.' },
        meAfterDelete: { status: 404, message: 'Usuario no encontrado.' },
        anonymousMe: { status: 401, message: 'Unauthorized', challenge: 'Bearer' },
        invalidRegister: { status: 400, fields: ['email'] },
        firstSessionEnded: 401,
      });
    },
    TIMEOUT_MS,
  );
});
