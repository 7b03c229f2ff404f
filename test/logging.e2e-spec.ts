import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { DEFAULT_PASSWORD, registerUser } from './factories/user.factory.js';
import {
  TEST_SECRET_KEY,
  type TestApp,
  type TestResponse,
  useTestApp,
} from './utils/create-test-app.js';
import { httpRequest } from './utils/http.js';
import { isRequestLine, type LogLine } from './utils/log-capture.js';
import {
  spawnServer,
  startServer,
  stopAllServers,
  waitForExit,
  type ServerProcess,
} from './utils/spawn-server.js';
import { LOGIN, ME, REFRESH, REGISTER, REVOKE } from './utils/routes.js';
import { describeOnSqlite, onPostgres } from './utils/test-database.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The id the service answered with; every log line of the request must carry it. */
function requestIdOf(response: TestResponse): string {
  const id = response.headers.get('x-request-id');
  if (id === null) {
    throw new Error(`no X-Request-Id in the answer (status ${response.status})`);
  }
  return id;
}

function postJson(
  t: TestApp,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<TestResponse> {
  return t.request(path, {
    method: 'POST',
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
  });
}

/**
 * Makes the database refuse every insert into `users`, as a full disk would (the way
 * test/faults.e2e-spec.ts injects failures); returns the undo.
 */
async function refuseUserInserts(t: TestApp): Promise<() => Promise<void>> {
  if (onPostgres) {
    await t.database.query(
      `CREATE FUNCTION refuse_users_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected fault'; END $$`,
    );
    await t.database.query(
      'CREATE TRIGGER refuse_users_insert BEFORE INSERT ON users FOR EACH ROW EXECUTE FUNCTION refuse_users_insert()',
    );
    return async () => {
      await t.database.query('DROP TRIGGER refuse_users_insert ON users');
      await t.database.query('DROP FUNCTION refuse_users_insert()');
    };
  }
  await t.database.query(
    `CREATE TRIGGER refuse_users_insert BEFORE INSERT ON users BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
  );
  return async () => {
    await t.database.query('DROP TRIGGER refuse_users_insert');
  };
}

/** The one line of a request whose message matches, besides its request line. */
function eventLine(t: TestApp, response: TestResponse, message: RegExp): LogLine {
  const lines = t.logs
    .forRequest(requestIdOf(response))
    .filter((line) => !isRequestLine(line) && message.test(line.msg ?? ''));
  expect(lines).toHaveLength(1);
  return lines[0];
}

describe('logs', () => {
  const t = useTestApp({ pinoLogs: true });

  describe('request lines', () => {
    it('should write one line per request with method, route, status and duration only', async () => {
      const user = await registerUser(t);

      const response = await t.get(ME, user.accessToken);

      expect(response.status).toBe(200);
      const id = requestIdOf(response);
      expect(await t.logs.requestLine(id)).toEqual({
        level: 'info',
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        pid: process.pid,
        hostname: expect.any(String),
        requestId: id,
        method: 'GET',
        route: ME,
        statusCode: 200,
        responseTime: expect.any(Number),
        msg: 'request completed',
      });
      expect(t.logs.forRequest(id)).toHaveLength(1);
    });

    it('should log the route pattern, never the URL with its query string', async () => {
      const response = await t.get(`${ME}?access_token=query-secret-6d1c`);

      expect(response.status).toBe(401);
      const line = await t.logs.requestLine(requestIdOf(response));
      expect(line).toMatchObject({ method: 'GET', route: ME, statusCode: 401 });
      expect(t.logs.text()).not.toContain('query-secret-6d1c');
    });

    it.each(['/api/auth/nothing-here', '/wp-login.php'])(
      'should log a request to %s, which matches no route, without a route',
      async (path) => {
        const response = await t.get(path);

        expect(response.status).toBe(404);
        const line = await t.logs.requestLine(requestIdOf(response));
        expect(line).toMatchObject({ method: 'GET', statusCode: 404 });
        expect(line).not.toHaveProperty('route');
        expect(t.logs.text()).not.toContain(path);
      },
    );
    it('should write the line of a request whose client hung up, without a status', async () => {
      const socket = connect(Number(new URL(t.baseUrl).port), '127.0.0.1');
      await once(socket, 'connect');
      socket.write(
        'POST /api/auth/register HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
          'Content-Type: application/json\r\nContent-Length: 100\r\n' +
          'X-Request-Id: hung-up-1\r\nExpect: 100-continue\r\n\r\n',
      );
      // Node answers 100 Continue in the same turn that it hands the request to Fastify, so by
      // now the request is being handled, waiting for its body.
      const [interim] = (await once(socket, 'data')) as [Buffer];
      expect(interim.toString()).toMatch(/^HTTP\/1\.1 100 Continue/);
      socket.destroy();

      const line = await t.logs.requestLine('hung-up-1');

      expect(line).toMatchObject({ method: 'POST', route: REGISTER, msg: 'request aborted' });
      expect(line).not.toHaveProperty('statusCode');
      expect(t.logs.forRequest('hung-up-1').filter(isRequestLine)).toHaveLength(1);
    });
  });

  describe('request id', () => {
    /** Logs in with `headers`; returns the answer and every line of that request. */
    async function logIn(headers: Record<string, string>) {
      const user = await registerUser(t);
      const response = await postJson(
        t,
        LOGIN,
        { email: user.email, password: DEFAULT_PASSWORD },
        headers,
      );
      expect(response.status).toBe(200);
      const id = requestIdOf(response);
      const requestLine = await t.logs.requestLine(id);
      const loggedIn = eventLine(t, response, new RegExp(`^User ${user.id} logged in$`));
      return { id, requestLine, loggedIn };
    }

    it('should answer with a tame client id and put it on the request line and the §6 line', async () => {
      const sent = 'client-7.Trace:42_abc';

      const { id, requestLine, loggedIn } = await logIn({ 'X-Request-Id': sent });

      expect(id).toBe(sent);
      expect(requestLine.requestId).toBe(sent);
      expect(loggedIn).toMatchObject({ level: 'info', context: 'AuthService', requestId: sent });
    });

    it('should make up an id when the client sends none, and use it everywhere', async () => {
      const { id, requestLine, loggedIn } = await logIn({});

      expect(id).toMatch(UUID);
      expect(requestLine.requestId).toBe(id);
      expect(loggedIn.requestId).toBe(id);
    });

    it.each([
      ['spaces', 'has spaces in it'],
      ['200 characters', 'x'.repeat(200)],
      ['a semicolon and quotes', 'a;b="c"'],
      ['nothing', ''],
    ])('should replace a client id with %s by one of its own', async (_label, sent) => {
      const { id, requestLine, loggedIn } = await logIn({ 'X-Request-Id': sent });

      expect(id).toMatch(UUID);
      expect(requestLine.requestId).toBe(id);
      expect(loggedIn.requestId).toBe(id);
      if (sent !== '') {
        expect(t.logs.text()).not.toContain(sent);
      }
    });

    it('should give concurrent requests their own ids', async () => {
      const user = await registerUser(t);

      const responses = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          postJson(
            t,
            LOGIN,
            { email: user.email, password: DEFAULT_PASSWORD },
            { 'X-Request-Id': `parallel-${i}` },
          ),
        ),
      );

      for (const [i, response] of responses.entries()) {
        expect(requestIdOf(response)).toBe(`parallel-${i}`);
        expect(eventLine(t, response, /^User .* logged in$/).requestId).toBe(`parallel-${i}`);
      }
    });
  });

  describe('SPEC §6 events', () => {
    it('should log registration, login and revocation at info level', async () => {
      const registered = await postJson(t, REGISTER, {
        username: 'events',
        email: 'events@example.com',
        password: DEFAULT_PASSWORD,
      });
      const { accessToken, refreshToken, user } = registered.json<{
        accessToken: string;
        refreshToken: string;
        user: { id: string };
      }>();
      const loggedIn = await postJson(t, LOGIN, {
        email: 'events@example.com',
        password: DEFAULT_PASSWORD,
      });
      const revoked = await postJson(
        t,
        REVOKE,
        { refreshToken },
        { authorization: `Bearer ${accessToken}` },
      );

      expect([registered.status, loggedIn.status, revoked.status]).toEqual([201, 200, 200]);
      expect(eventLine(t, registered, /registered$/)).toMatchObject({
        level: 'info',
        context: 'AuthService',
        msg: `User ${user.id} registered`,
      });
      expect(eventLine(t, loggedIn, /logged in$/)).toMatchObject({
        level: 'info',
        context: 'AuthService',
        msg: `User ${user.id} logged in`,
      });
      expect(eventLine(t, revoked, /revoked/)).toMatchObject({
        level: 'info',
        context: 'TokensService',
        msg: `Refresh token revoked for user ${user.id}`,
      });
    });

    it('should warn about a lockout, on the fifth wrong password', async () => {
      const user = await registerUser(t);
      const attempts: TestResponse[] = [];

      for (let i = 0; i < 5; i += 1) {
        attempts.push(await postJson(t, LOGIN, { email: user.email, password: 'Wrong!pass1' }));
      }

      expect(attempts.map((response) => response.status)).toEqual([401, 401, 401, 401, 401]);
      expect(eventLine(t, attempts[4], /locked out/)).toMatchObject({
        level: 'warn',
        context: 'AuthService',
        msg: `User ${user.id} locked out after 5 failed login attempts`,
      });
      for (const response of attempts.slice(0, 4)) {
        expect(t.logs.forRequest(requestIdOf(response)).filter((l) => !isRequestLine(l))).toEqual(
          [],
        );
      }
    });

    it('should warn about a reused refresh token', async () => {
      const user = await registerUser(t);
      const rotated = await postJson(t, REFRESH, { refreshToken: user.refreshToken });

      const replayed = await postJson(t, REFRESH, { refreshToken: user.refreshToken });

      expect([rotated.status, replayed.status]).toEqual([200, 401]);
      expect(eventLine(t, replayed, /reuse/)).toMatchObject({
        level: 'warn',
        context: 'TokensService',
        msg: `Refresh token reuse detected for user ${user.id}: 1 descendant token(s) revoked`,
      });
    });

    it('should log an unhandled failure at error level, with its stack and request id', async () => {
      const restore = await refuseUserInserts(t);
      const response = await postJson(
        t,
        REGISTER,
        { username: 'fails', email: 'fails@example.com', password: DEFAULT_PASSWORD },
        { 'X-Request-Id': 'failing-request-1' },
      );
      await restore();

      expect(response.status).toBe(500);
      expect(requestIdOf(response)).toBe('failing-request-1');
      const errorLine = eventLine(t, response, /^Unhandled failure$/);
      expect(errorLine).toMatchObject({
        level: 'error',
        context: 'AllExceptionsFilter',
        requestId: 'failing-request-1',
        stack: expect.stringMatching(/injected fault[\s\S]*\n\s+at /),
      });
      expect(await t.logs.requestLine('failing-request-1')).toMatchObject({
        level: 'info',
        statusCode: 500,
      });
      expect(t.logs.lines().filter((line) => line.level === 'error')).toEqual([errorLine]);
    });
  });

  describe('redaction', () => {
    it('should keep credentials, tokens, cookies and bodies out of every line', async () => {
      const password = 'S3cure!pass-leak-pw-31f7';
      const secrets: string[] = [password, 'leak-cookie-5e02', 'leak-bearer-a9c4'];
      const answers: TestResponse[] = [];
      const send = async (path: string, init: RequestInit): Promise<TestResponse> => {
        const response = await t.request(path, init);
        answers.push(response);
        return response;
      };
      const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
        method: 'POST',
        body: typeof body === 'string' ? body : JSON.stringify(body),
        headers: { 'content-type': 'application/json', cookie: 'sid=leak-cookie-5e02', ...headers },
      });

      const registered = await send(
        REGISTER,
        json({ username: 'leaky', email: 'leaky@example.com', password }),
      );
      const first = registered.json<{ accessToken: string; refreshToken: string }>();
      const login = await send(LOGIN, json({ email: 'leaky@example.com', password }));
      const second = login.json<{ accessToken: string; refreshToken: string }>();
      await send(ME, {
        headers: {
          authorization: `Bearer ${first.accessToken}`,
          cookie: 'sid=leak-cookie-5e02; theme=dark',
          'x-refresh-token': first.refreshToken,
        },
      });
      await send(ME, { headers: { authorization: 'Bearer leak-bearer-a9c4' } });
      const refreshed = await send(REFRESH, json({ refreshToken: first.refreshToken }));
      const third = refreshed.json<{ accessToken: string; refreshToken: string }>();
      await send(
        REVOKE,
        json(
          { refreshToken: third.refreshToken, reason: 'logout' },
          { authorization: `Bearer ${third.accessToken}`, 'x-refresh-token': third.refreshToken },
        ),
      );
      await send(LOGIN, json({ email: 'leaky@example.com', password: 'Wrong!pass-leak-0b6e' }));
      secrets.push('Wrong!pass-leak-0b6e');
      // A validation 400, and a body that is not even JSON.
      await send(
        REGISTER,
        json({ username: 'x', email: 'not-an-email', password: 'leak-weak-77d0' }),
      );
      await send(LOGIN, json('{"email":"a@example.com","password":"leak-malformed-c3'));
      secrets.push('leak-weak-77d0', 'leak-malformed-c3');
      // A 500 in the middle of a registration.
      const restore = await refuseUserInserts(t);
      await send(
        REGISTER,
        json({ username: 'y', email: 'leak500@example.com', password: 'S3cure!pass-leak-500' }),
      );
      await restore();
      secrets.push('S3cure!pass-leak-500');
      for (const tokens of [first, second, third]) {
        secrets.push(tokens.accessToken, tokens.refreshToken);
      }

      expect(answers.map((response) => response.status)).toEqual([
        201, 200, 200, 401, 200, 200, 401, 400, 400, 500,
      ]);
      for (const response of answers) {
        expect(await t.logs.requestLine(requestIdOf(response))).toMatchObject({
          statusCode: response.status,
        });
      }
      expect(t.logs.lines().filter((line) => line.level === 'error')).toHaveLength(1);
      const written = t.logs.text();
      expect(secrets.filter((secret) => written.includes(secret))).toEqual([]);
      expect(written).not.toMatch(/authorization|cookie|x-refresh-token|"password"|"headers"/i);
    });
  });
});

describeOnSqlite('logs of the real process', () => {
  /** Start-up of the built server, development mode (Swagger) included, on a busy machine. */
  const PROCESS_TEST_TIMEOUT_MS = 60_000;
  const password = 'S3cure!pass-process-leak-4a0d';
  const directories: string[] = [];

  afterEach(async () => {
    await stopAllServers();
    for (const directory of directories.splice(0)) {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  function start(env: Record<string, string>): Promise<ServerProcess> {
    const cwd = mkdtempSync(join(tmpdir(), 'keygate-logs-'));
    directories.push(cwd);
    return startServer({
      cwd,
      env: {
        Jwt__SecretKey: TEST_SECRET_KEY,
        PasswordHashing__Iterations: '1000',
        ConnectionStrings__DefaultConnection: join(cwd, 'keygate.db'),
        ...env,
      },
    });
  }

  function register(server: ServerProcess, requestId: string): Promise<TestResponse> {
    return httpRequest(server.baseUrl, REGISTER, {
      method: 'POST',
      body: JSON.stringify({ username: 'p', email: `${requestId}@example.com`, password }),
      headers: { 'content-type': 'application/json', 'x-request-id': requestId },
    });
  }

  /** Waits, bounded, until stdout has a line containing `text`; returns all of stdout. */
  async function stdoutOnceItHas(server: ServerProcess, text: string): Promise<string> {
    const deadline = Date.now() + 5_000;
    while (!server.stdout().includes(text) && Date.now() < deadline) {
      await delay(20);
    }
    return server.stdout();
  }

  function outputLines(output: string): string[] {
    return output.split('\n').filter((line) => line !== '');
  }

  it(
    'should write only JSON lines in production, Nest start-up lines included',
    async () => {
      const server = await start({});

      const response = await register(server, 'process-json-1');

      expect(response.status).toBe(201);
      const stdout = await stdoutOnceItHas(server, 'request completed');
      const lines = outputLines(stdout).map((line) => JSON.parse(line) as LogLine);
      // bufferLogs: the very first line, written before pino existed, went through pino.
      expect(lines[0]).toMatchObject({ level: 'info', context: 'NestFactory' });
      expect(lines.filter((line) => line.requestId === 'process-json-1')).toEqual([
        expect.objectContaining({
          level: 'info',
          context: 'AuthService',
          msg: expect.stringMatching(/^User .+ registered$/),
        }),
        expect.objectContaining({
          level: 'info',
          method: 'POST',
          route: REGISTER,
          statusCode: 201,
          responseTime: expect.any(Number),
          msg: 'request completed',
        }),
      ]);
      expect(stdout).not.toContain(password);
      expect(server.stderr()).toBe('');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'should write readable lines in development',
    async () => {
      const server = await start({ NODE_ENV: 'development' });

      const response = await register(server, 'process-pretty-1');

      expect(response.status).toBe(201);
      const stdout = await stdoutOnceItHas(server, 'request completed');
      const lines = outputLines(stdout).filter((line) => line.includes('process-pretty-1'));
      expect(lines).toEqual([
        expect.stringMatching(
          /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: \[AuthService\] User \S+ registered \{"requestId":"process-pretty-1"\}$/,
        ),
        expect.stringMatching(
          /^\[[\d:.]+\] INFO: request completed \{"requestId":"process-pretty-1","method":"POST","route":"\/api\/auth\/register","statusCode":201,"responseTime":[\d.]+\}$/,
        ),
      ]);
      expect(stdout).not.toContain(password);
      expect(outputLines(stdout).filter((line) => line.startsWith('{'))).toEqual([]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'should write warnings but no request lines with Logging__Level=warn',
    async () => {
      const server = await start({ Logging__Level: 'warn' });

      const response = await register(server, 'process-warn-1');
      // A later request whose line would follow the first one's.
      await register(server, 'process-warn-2');

      expect(response.status).toBe(201);
      const lines = outputLines(server.stdout()).map((line) => JSON.parse(line) as LogLine);
      expect(lines).toEqual([
        expect.objectContaining({
          level: 'warn',
          msg: expect.stringContaining('PasswordHashing__Iterations'),
        }),
      ]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'should write nothing at all with Logging__Level=silent',
    async () => {
      const server = await start({ Logging__Level: 'silent' });

      const response = await register(server, 'process-silent-1');
      await httpRequest(server.baseUrl, ME);
      await delay(200);

      expect(response.status).toBe(201);
      expect(server.stdout()).toBe('');
      expect(server.stderr()).toBe('');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'should refuse to start with an unknown Logging__Level, in one line',
    async () => {
      const cwd = mkdtempSync(join(tmpdir(), 'keygate-logs-'));
      directories.push(cwd);
      const server = await spawnServer({
        cwd,
        env: {
          Jwt__SecretKey: TEST_SECRET_KEY,
          ConnectionStrings__DefaultConnection: join(cwd, 'keygate.db'),
          Logging__Level: 'verbose',
        },
      });

      const exit = await waitForExit(server);

      expect(exit.code).toBe(1);
      expect(outputLines(server.stderr())).toEqual([
        expect.stringMatching(/^Keygate failed to start: .*Logging__Level.*\(got "verbose"\)$/),
      ]);
      expect(server.stdout()).toBe('');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
