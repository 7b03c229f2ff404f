import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SAMPLE_SECRET_KEY } from '../src/config/environment-variables.js';
import { DEFAULT_PASSWORD, registerUser } from './factories/user.factory.js';
import {
  createTestApp,
  TEST_SECRET_KEY,
  type TestApp,
  type TestAppOptions,
} from './utils/create-test-app.js';
import { authResponse, errorBody } from './utils/expected-bodies.js';
import { httpRequest, type TestResponse } from './utils/http.js';
import { LOGIN, ME, REFRESH, REGISTER, REVOKE } from './utils/routes.js';
import { createTestDatabase, describeOnSqlite, type TestDatabase } from './utils/test-database.js';
import { decodeJwt, isSignedWith } from './utils/jwt.js';
import {
  spawnServer,
  startServer,
  stopAllServers,
  waitForExit,
  type ServerProcess,
} from './utils/spawn-server.js';

/** Matches any message text; SPEC §7 leaves these messages open. */
const ANY_TEXT = expect.any(String) as string;
const AUTH_PATHS = [REGISTER, LOGIN, REFRESH, REVOKE, ME];
/** Spawned servers hash cheaply unless a test is about the hashing cost. */
const FAST_HASHING = { PasswordHashing__Iterations: '1000' };
/** "Exits within a few seconds." */
const CRASH_TIMEOUT_MS = 5_000;
const STACK_LINE = '    at ';
const DOTENV_SECRET = 'dotenv-file-secret-key-0123456789abcdef-xyz';
const SHORT_SECRET = 'short-secret-'.padEnd(31, '0');

const temporaryDirectories: string[] = [];
const temporaryDatabases: TestDatabase[] = [];
const openApps = new Set<TestApp>();

function temporaryDirectory(): string {
  const directory = mkdtempSync(join(tmpdir(), 'keygate-config-'));
  temporaryDirectories.push(directory);
  return directory;
}

/** A database that outlives the apps opened on it; dropped after the test, once they are closed. */
async function temporaryDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase();
  temporaryDatabases.push(database);
  return database;
}

async function openApp(options: TestAppOptions = {}): Promise<TestApp> {
  const t = await createTestApp(options);
  openApps.add(t);
  return t;
}

async function closeApp(t: TestApp): Promise<void> {
  openApps.delete(t);
  await t.close();
}

/** A bounded HTTP request to a spawned server. */
function call(server: ServerProcess, path: string, init: RequestInit = {}): Promise<TestResponse> {
  return httpRequest(server.baseUrl, path, {
    ...init,
    signal: AbortSignal.timeout(CRASH_TIMEOUT_MS),
  });
}

function postJson(server: ServerProcess, path: string, body: unknown): Promise<TestResponse> {
  return call(server, path, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
}

interface AuthBody {
  readonly accessToken: string;
  readonly refreshToken: string;
}

/** Registers a fresh user on a spawned server and returns the credentials and the answer. */
async function registerOn(
  server: ServerProcess,
  email = 'spawned@example.com',
): Promise<{ email: string; password: string; response: TestResponse }> {
  const body = { username: 'spawned', email, password: DEFAULT_PASSWORD };
  const response = await postJson(server, REGISTER, body);
  return { email, password: DEFAULT_PASSWORD, response };
}

function linesNaming(text: string, key: string): string[] {
  return text.split('\n').filter((line) => line.includes(key));
}

/** A database file in a fresh directory, for a spawned server. */
function databaseIn(directory: string): Record<string, string> {
  return { ConnectionStrings__DefaultConnection: join(directory, 'keygate.db') };
}

afterEach(async () => {
  await stopAllServers();
  for (const t of [...openApps]) {
    await closeApp(t);
  }
  for (const database of temporaryDatabases.splice(0)) {
    await database.drop();
  }
  for (const directory of temporaryDirectories.splice(0)) {
    rmSync(directory, { recursive: true, force: true });
  }
});

describe('configuration', () => {
  describe('start-up failures', () => {
    it.each<{ name: string; env: Record<string, string>; key: string }>([
      {
        name: 'an empty Jwt__SecretKey',
        env: { NODE_ENV: 'development', Jwt__SecretKey: '' },
        key: 'Jwt__SecretKey',
      },
      {
        name: 'a secret of 31 characters',
        env: { NODE_ENV: 'development', Jwt__SecretKey: SHORT_SECRET },
        key: 'Jwt__SecretKey',
      },
      {
        name: 'Jwt__AccessTokenExpiryMinutes=abc',
        env: { Jwt__SecretKey: TEST_SECRET_KEY, Jwt__AccessTokenExpiryMinutes: 'abc' },
        key: 'Jwt__AccessTokenExpiryMinutes',
      },
      {
        name: 'Jwt__RefreshTokenExpiryDays=abc',
        env: { Jwt__SecretKey: TEST_SECRET_KEY, Jwt__RefreshTokenExpiryDays: 'abc' },
        key: 'Jwt__RefreshTokenExpiryDays',
      },
      {
        name: 'NODE_ENV=production without a secret',
        env: { NODE_ENV: 'production' },
        key: 'Jwt__SecretKey',
      },
      { name: 'NODE_ENV unset without a secret', env: {}, key: 'Jwt__SecretKey' },
      {
        name: 'NODE_ENV=staging without a secret',
        env: { NODE_ENV: 'staging' },
        key: 'Jwt__SecretKey',
      },
      {
        name: 'NODE_ENV=production with the sample placeholder secret',
        env: { NODE_ENV: 'production', Jwt__SecretKey: SAMPLE_SECRET_KEY },
        key: 'Jwt__SecretKey',
      },
      {
        name: 'NODE_ENV unset with the sample placeholder secret',
        env: { Jwt__SecretKey: SAMPLE_SECRET_KEY },
        key: 'Jwt__SecretKey',
      },
      {
        name: 'Cors__AllowedOrigins=* in production',
        env: { NODE_ENV: 'production', Jwt__SecretKey: TEST_SECRET_KEY, Cors__AllowedOrigins: '*' },
        key: 'Cors__AllowedOrigins',
      },
      {
        name: 'a port wildcard in Cors__AllowedOrigins with NODE_ENV unset',
        env: { Jwt__SecretKey: TEST_SECRET_KEY, Cors__AllowedOrigins: 'http://localhost:*' },
        key: 'Cors__AllowedOrigins',
      },
    ])('should refuse to start with $name', async ({ env, key }) => {
      expect(SHORT_SECRET).toHaveLength(31);
      const cwd = temporaryDirectory();
      const server = await spawnServer({
        cwd,
        env: { ...FAST_HASHING, ...databaseIn(cwd), ...env },
      });

      const exit = await waitForExit(server, CRASH_TIMEOUT_MS);

      expect(exit.signal).toBeNull();
      expect(exit.code).not.toBe(0);
      const stderr = server.stderr();
      expect(linesNaming(stderr, key)).toHaveLength(1);
      expect(`${stderr}${server.stdout()}`).not.toContain(STACK_LINE);
      if (env.Jwt__SecretKey !== undefined && env.Jwt__SecretKey !== '') {
        expect(`${stderr}${server.stdout()}`).not.toContain(env.Jwt__SecretKey);
      }
    });

    it('should say why an origin wildcard is refused in production, in one line', async () => {
      const cwd = temporaryDirectory();
      const server = await spawnServer({
        cwd,
        env: {
          ...FAST_HASHING,
          ...databaseIn(cwd),
          Jwt__SecretKey: TEST_SECRET_KEY,
          Cors__AllowedOrigins: 'https://app.example.com, *',
        },
      });

      const exit = await waitForExit(server, CRASH_TIMEOUT_MS);

      expect({ code: exit.code, stderr: server.stderr() }).toEqual({
        code: 1,
        stderr:
          'Keygate failed to start: Invalid configuration: Cors__AllowedOrigins: "*" would let a ' +
          "page on any origin drive registration and login from a visitor's browser, so it is " +
          'refused in production; list the exact origins of your front ends\n',
      });
    });

    it('should start in development without a secret, warning about Jwt__SecretKey', async () => {
      const cwd = temporaryDirectory();
      const server = await startServer({
        cwd,
        env: { NODE_ENV: 'development', ...FAST_HASHING, ...databaseIn(cwd) },
      });

      const { response } = await registerOn(server);

      expect(response.status).toBe(201);
      const output = `${server.stdout()}${server.stderr()}`;
      expect(linesNaming(output, 'Jwt__SecretKey')).toEqual([expect.stringContaining('WARN')]);
      expect(output).not.toContain(SAMPLE_SECRET_KEY);
      // Spec §5: the default secret is the sample placeholder.
      expect(isSignedWith(response.json<AuthBody>().accessToken, SAMPLE_SECRET_KEY)).toBe(true);
    });
  });

  describe('password hashing cost', () => {
    it('should warn at start-up when PasswordHashing__Iterations is below 600000', async () => {
      const t = await openApp({ environment: { PasswordHashing__Iterations: '599999' } });

      expect(t.logger.at('warn').map((entry) => entry.text)).toEqual([
        expect.stringContaining('PasswordHashing__Iterations'),
      ]);
    });

    it('should not warn when PasswordHashing__Iterations is 600000', async () => {
      const t = await openApp({ environment: { PasswordHashing__Iterations: '600000' } });

      expect(t.logger.allText()).not.toContain('PasswordHashing__Iterations');
    });

    it('should warn in the output of the real process', async () => {
      const cwd = temporaryDirectory();
      const server = await startServer({
        cwd,
        env: { Jwt__SecretKey: TEST_SECRET_KEY, ...FAST_HASHING, ...databaseIn(cwd) },
      });

      // Production logs are JSON lines.
      expect(linesNaming(server.stdout(), 'PasswordHashing__Iterations')).toEqual([
        expect.stringContaining('"level":"warn"'),
      ]);
    });
  });

  describe('Swagger', () => {
    // Development mode is exercised on the real process: in-process under Jest on Node 20,
    // SwaggerModule's `import('@fastify/static')` fails (it requires the ESM-only
    // content-disposition) and @nestjs/common's loadPackage then calls process.exit(1),
    // killing the Jest worker.
    function startDevelopmentServer(): Promise<ServerProcess> {
      const cwd = temporaryDirectory();
      return startServer({
        cwd,
        env: {
          NODE_ENV: 'development',
          Jwt__SecretKey: TEST_SECRET_KEY,
          ...FAST_HASHING,
          ...databaseIn(cwd),
        },
      });
    }

    it('should serve the documentation page at / in development', async () => {
      const server = await startDevelopmentServer();

      const response = await call(server, '/');

      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html\b/);
      expect(response.text).toContain('swagger');
    });

    it('should serve an OpenAPI document with every endpoint and bearer security', async () => {
      const server = await startDevelopmentServer();

      const response = await call(server, '/openapi.json');

      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json\b/);
      const document = response.json<{
        openapi: string;
        paths: Record<string, Record<string, { security?: unknown }>>;
        components: { securitySchemes?: Record<string, unknown> };
      }>();
      expect(document.openapi).toMatch(/^3\./);
      expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(AUTH_PATHS));
      const schemes = Object.entries(document.components.securitySchemes ?? {});
      const bearer = schemes.find(
        ([, scheme]) =>
          typeof scheme === 'object' &&
          scheme !== null &&
          'type' in scheme &&
          scheme.type === 'http' &&
          'scheme' in scheme &&
          scheme.scheme === 'bearer',
      );
      expect(bearer).toBeDefined();
      const name = bearer?.[0] ?? '';
      expect(document.paths[ME]?.get?.security).toEqual([{ [name]: [] }]);
      expect(document.paths[REVOKE]?.post?.security).toEqual([{ [name]: [] }]);
    });

    it.each(['/', '/openapi.json'])(
      'should answer %s with a 404 error body in production',
      async (path) => {
        const t = await openApp({ environment: { NODE_ENV: 'production' } });

        const response = await t.get(path);

        expect({ status: response.status, body: response.json() }).toEqual({
          status: 404,
          body: errorBody(404, ANY_TEXT),
        });
      },
    );

    it('should answer / and /openapi.json with 404 error bodies when NODE_ENV is unset', async () => {
      const cwd = temporaryDirectory();
      const server = await startServer({
        cwd,
        env: { Jwt__SecretKey: TEST_SECRET_KEY, ...FAST_HASHING, ...databaseIn(cwd) },
      });

      for (const path of ['/', '/openapi.json']) {
        const response = await call(server, path);

        expect({ path, status: response.status, body: response.json() }).toEqual({
          path,
          status: 404,
          body: errorBody(404, ANY_TEXT),
        });
      }
    });
  });

  describe('persistence across restarts', () => {
    it('should keep users and refresh tokens when the app restarts on the same database', async () => {
      const database = await temporaryDatabase();
      const first = await openApp({ database });
      const user = await registerUser(first);
      await closeApp(first);

      const second = await openApp({ database });
      const login = await second.post(LOGIN, { email: user.email, password: user.password });
      const refresh = await second.post(REFRESH, { refreshToken: user.refreshToken });

      expect({ status: login.status, body: login.json() }).toEqual({
        status: 200,
        body: authResponse(user),
      });
      expect({ status: refresh.status, body: refresh.json() }).toEqual({
        status: 200,
        body: authResponse(user),
      });
    });

    it('should keep users when the real process is stopped with SIGTERM and started again', async () => {
      const cwd = temporaryDirectory();
      const env = {
        NODE_ENV: 'production',
        Jwt__SecretKey: TEST_SECRET_KEY,
        ...FAST_HASHING,
        ...databaseIn(cwd),
      };
      const first = await startServer({ cwd, env });
      const { email, password, response } = await registerOn(first);
      expect(response.status).toBe(201);

      const exit = await first.stop('SIGTERM');

      expect(exit).toEqual({ code: 0, signal: null });
      const second = await startServer({ cwd, env });
      const login = await postJson(second, LOGIN, { email, password });
      const refresh = await postJson(second, REFRESH, {
        refreshToken: response.json<AuthBody>().refreshToken,
      });
      expect(login.status).toBe(200);
      expect(refresh.status).toBe(200);
    }, 30_000);
  });

  describe('connection string', () => {
    it.each([
      { form: 'a bare path', value: (path: string) => path },
      { form: 'Data Source=<path>', value: (path: string) => `Data Source=${path}` },
      { form: 'data source = <path>;', value: (path: string) => `data source = ${path};` },
    ])('should open the SQLite file given as $form', async ({ value }) => {
      const path = join(temporaryDirectory(), 'named.db');

      const t = await openApp({
        environment: { ConnectionStrings__DefaultConnection: value(path) },
      });
      const user = await registerUser(t);

      expect(t.dataSource.options.database).toBe(path);
      expect(existsSync(path)).toBe(true);
      expect(user.id).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('should create the folders of a path that does not exist yet', async () => {
      const directory = temporaryDirectory();
      const path = join(directory, 'nested', 'deeper', 'k.db');
      expect(existsSync(join(directory, 'nested'))).toBe(false);

      const t = await openApp({
        environment: { ConnectionStrings__DefaultConnection: `Data Source=${path}` },
      });
      await registerUser(t);

      expect(existsSync(path)).toBe(true);
    });

    it('should use data/keygate.db under the working directory by default', async () => {
      const cwd = temporaryDirectory();
      const server = await startServer({
        cwd,
        env: { NODE_ENV: 'production', Jwt__SecretKey: TEST_SECRET_KEY, ...FAST_HASHING },
      });

      const { response } = await registerOn(server);

      expect(response.status).toBe(201);
      expect(existsSync(join(cwd, 'data', 'keygate.db'))).toBe(true);
    });
  });

  describeOnSqlite('SQLite settings', () => {
    it('should run in WAL mode', async () => {
      const t = await openApp();

      const rows = await t.dataSource.query<Array<{ journal_mode: string }>>('PRAGMA journal_mode');

      expect(rows).toEqual([{ journal_mode: 'wal' }]);
    });

    it('should fsync every commit by default (synchronous = FULL)', async () => {
      const t = await openApp();

      const rows = await t.dataSource.query<Array<{ synchronous: number }>>('PRAGMA synchronous');

      expect(rows).toEqual([{ synchronous: 2 }]);
    });

    it('should fsync only at checkpoints with Database__SqliteSynchronous=normal', async () => {
      const t = await openApp({ environment: { Database__SqliteSynchronous: 'normal' } });

      const rows = await t.dataSource.query<Array<{ synchronous: number }>>('PRAGMA synchronous');

      expect(rows).toEqual([{ synchronous: 1 }]);
    });

    it('should wait for locks with a busy timeout', async () => {
      const t = await openApp();

      const rows = await t.dataSource.query<Array<Record<string, number>>>('PRAGMA busy_timeout');

      expect(Object.values(rows[0] ?? {})[0]).toBeGreaterThan(0);
    });
  });

  describe('.env file', () => {
    it('should read Jwt__SecretKey from a .env file in the working directory', async () => {
      const cwd = temporaryDirectory();
      writeFileSync(join(cwd, '.env'), `Jwt__SecretKey=${DOTENV_SECRET}\n`);
      const server = await startServer({
        cwd,
        env: { NODE_ENV: 'production', ...FAST_HASHING, ...databaseIn(cwd) },
      });

      const { response } = await registerOn(server);

      expect(response.status).toBe(201);
      expect(isSignedWith(response.json<AuthBody>().accessToken, DOTENV_SECRET)).toBe(true);
    });

    it('should refuse an invalid value that only the .env file provides', async () => {
      const cwd = temporaryDirectory();
      writeFileSync(join(cwd, '.env'), 'Jwt__AccessTokenExpiryMinutes=abc\n');
      const server = await spawnServer({
        cwd,
        env: { Jwt__SecretKey: TEST_SECRET_KEY, ...FAST_HASHING, ...databaseIn(cwd) },
      });

      const exit = await waitForExit(server, CRASH_TIMEOUT_MS);

      expect(exit.code).not.toBe(0);
      expect(linesNaming(server.stderr(), 'Jwt__AccessTokenExpiryMinutes')).toHaveLength(1);
    });

    it('should let the environment win over the .env file', async () => {
      const cwd = temporaryDirectory();
      writeFileSync(
        join(cwd, '.env'),
        `Jwt__AccessTokenExpiryMinutes=abc\nJwt__SecretKey=${DOTENV_SECRET}\n`,
      );
      const server = await startServer({
        cwd,
        env: {
          Jwt__AccessTokenExpiryMinutes: '15',
          Jwt__SecretKey: TEST_SECRET_KEY,
          ...FAST_HASHING,
          ...databaseIn(cwd),
        },
      });

      const { response } = await registerOn(server);

      expect(response.status).toBe(201);
      const { accessToken } = response.json<AuthBody>();
      expect(isSignedWith(accessToken, TEST_SECRET_KEY)).toBe(true);
      const { iat, exp } = decodeJwt(accessToken).payload;
      expect(Number(exp) - Number(iat)).toBe(15 * 60);
    });
  });
});
