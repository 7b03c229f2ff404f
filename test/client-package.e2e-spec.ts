import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { useSharedTestApp } from './utils/create-test-app.js';

// What would be published is what is tested: @keygate/client is built, packed with `npm pack`,
// installed from the tarball into an empty project, type-checked there with the repository's
// tsc (as a Node project and as a browser one), and run in Node against the service.

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const PACKAGE = join(ROOT, 'packages', 'client');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
/** Building, packing, installing, two type-checks and a run, on a busy machine. */
const TIMEOUT_MS = 180_000;

/** The consumer's code: every name it uses must exist with the types it expects. */
const CONSUMER = `import {
  createKeygateClient,
  KeygateError,
  type AuthResponse,
  type CompleteSignInResult,
  type FederationErrorCode,
  type KeygateClient,
  type LinkedIdentity,
  type KeygateStorage,
  type Passkey,
  type PublicUser,
  type SessionState,
} from '@keygate/client';

// Compiled for browsers too, where \`process\` has no type.
const { argv } = (globalThis as unknown as { process: { argv: string[] } }).process;
const baseUrl = argv[2] ?? '';
const items = new Map<string, string>();
const storage: KeygateStorage = {
  getItem: (key) => items.get(key) ?? null,
  setItem: (key, value) => void items.set(key, value),
  removeItem: (key) => void items.delete(key),
};
const client: KeygateClient = createKeygateClient({ baseUrl, storage });
const states: (string | null)[] = [];
client.onChange((state: SessionState) => states.push(state === null ? null : state.user.username));

// @ts-expect-error: the contract requires a password.
void (() => client.login({ email: 'nobody@example.com' }));
// Passkeys need a browser's WebAuthn: their names and types are checked, not run.
const passkeyCalls = (): Promise<unknown>[] => [
  client.registerPasskey({ password: 'S3cure!pass', name: 'Portátil' }),
  client.registerPasskey({ passkey: true }).then((passkey: Passkey) => passkey.id),
  client.signInWithPasskey({ mediation: 'conditional', signal: new AbortController().signal }),
  client.login({ email: 'nobody@example.com', password: 'S3cure!pass', passkey: true }),
  client.listPasskeys().then(({ passkeys }) => passkeys.map((passkey) => passkey.name)),
  client.renamePasskey('id', { name: 'Teléfono' }),
  client.removePasskey('id'),
];
void passkeyCalls;
// @ts-expect-error: adding a passkey asks for a proof.
void (() => client.registerPasskey({ name: 'Portátil' }));
// Other identity providers navigate the browser: their names and types are checked, not run.
const federationCalls = (): Promise<unknown>[] => [
  client.providers().then(({ providers }) => providers.map(({ id, name }) => id + name)),
  client.signInWith('google', { redirectTo: 'https://app.example.com/signed-in' }),
  client.completeSignIn().then((result: CompleteSignInResult): string | FederationErrorCode => {
    switch (result.status) {
      case 'signed-in':
        return result.response.user.id;
      case 'linked':
        return result.provider;
      case 'error':
        return result.error;
      case 'second-factor-required':
      case 'none':
        return result.status;
    }
  }),
  client.completeSignIn({ secondFactorCode: '123456' }),
  client.completeSignIn({ passkey: true }),
  client.linkProvider('github', { redirectTo: 'https://app.example.com/settings', password: 'S3cure!pass' }),
  client.identities().then(({ identities }) => identities.map((identity: LinkedIdentity) => identity.email)),
  client.unlinkIdentity('id'),
];
void federationCalls;
// @ts-expect-error: a flow needs the page it returns to.
void (() => client.signInWith('google', {}));

const email = \`package-\${Date.now()}@example.com\`;
const registered: AuthResponse = await client.register({ username: 'packed', email, password: 'S3cure!pass' });
const me: PublicUser = await client.me();
const refreshed = await client.refresh();
const answer = await client.fetch(\`\${baseUrl}/api/auth/me\`);
const sessions = await client.listSessions();
await client.logout();
const wrong = await client.login({ email, password: 'Wr0ng!pass' }).catch((error: unknown) => error);
console.log(JSON.stringify({
  sameUser: me.id === registered.user.id,
  rotated: refreshed.refreshToken !== registered.refreshToken,
  fetched: answer.status,
  current: sessions.sessions.filter((session) => session.current).length,
  token: await client.getAccessToken(),
  states,
  wrong: wrong instanceof KeygateError ? { status: wrong.status, message: wrong.message } : String(wrong),
}));
`;

function tsconfig(lib: string[], types: string[]): string {
  return JSON.stringify({
    compilerOptions: {
      module: 'nodenext',
      moduleResolution: 'nodenext',
      target: 'es2022',
      lib,
      types,
      typeRoots: [join(ROOT, 'node_modules', '@types')],
      strict: true,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      skipLibCheck: false,
      outDir: 'out',
    },
    files: ['consumer.ts'],
  });
}

describe('The @keygate/client tarball', () => {
  const t = useSharedTestApp();
  let directory: string;

  beforeAll(() => {
    directory = mkdtempSync(join(tmpdir(), 'keygate-client-package-'));
  });

  afterAll(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  it(
    'should install into an empty project, type-check for Node and for browsers, and run',
    async () => {
      await run(process.execPath, [TSC, '-p', join(PACKAGE, 'tsconfig.build.json')]);
      const { stdout: packed } = await run(
        'npm',
        ['pack', '--json', '--pack-destination', directory],
        {
          cwd: PACKAGE,
        },
      );
      const [{ filename, files }] = JSON.parse(packed) as {
        filename: string;
        files: { path: string }[];
      }[];
      const project = join(directory, 'project');
      await run('mkdir', [project]);
      writeFileSync(join(project, 'package.json'), '{ "type": "module", "private": true }\n');
      await run(
        'npm',
        ['install', '--offline', '--no-audit', '--no-fund', join(directory, filename)],
        {
          cwd: project,
        },
      );
      writeFileSync(join(project, 'consumer.ts'), CONSUMER);
      const typeCheck = (lib: string[], types: string[]) => {
        writeFileSync(join(project, 'tsconfig.json'), tsconfig(lib, types));
        return run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: project }).catch(
          (error: Error & { stdout?: string }) => {
            throw new Error(
              `tsc refused the consumer (${lib.join(',')}):\n${error.stdout ?? error.message}`,
            );
          },
        );
      };
      await typeCheck(['es2022', 'dom'], []);
      await typeCheck(['es2022'], ['node']);

      const { stdout } = await run(process.execPath, [join('out', 'consumer.js'), t.baseUrl], {
        cwd: project,
      });
      const installed = JSON.parse(
        readFileSync(join(project, 'node_modules', '@keygate', 'client', 'package.json'), 'utf8'),
      ) as Record<string, unknown>;
      const module = readFileSync(
        join(project, 'node_modules', '@keygate', 'client', 'dist', 'keygate-client.js'),
        'utf8',
      );

      expect(files.map(({ path }) => path).sort()).toEqual([
        'README.md',
        'dist/keygate-client.d.ts',
        'dist/keygate-client.js',
        'dist/openapi.d.ts',
        'package.json',
      ]);
      expect(installed.name).toBe('@keygate/client');
      expect(installed.dependencies).toBeUndefined();
      // A page loads it as it is: no import at all, bare or not.
      expect(module).not.toMatch(/^\s*import\b|\bimport\s*\(/m);
      expect(JSON.parse(stdout)).toEqual({
        sameUser: true,
        rotated: true,
        fetched: 200,
        current: 1,
        token: null,
        states: ['packed', 'packed', null],
        wrong: { status: 401, message: 'Credenciales inválidas.' },
      });
    },
    TIMEOUT_MS,
  );
});
