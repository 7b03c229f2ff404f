import { DEFAULT_PASSWORD, registerUser } from './factories/user.factory.js';
import { createTestApp, type TestApp } from './utils/create-test-app.js';
import { startDevelopmentServer, type DevelopmentServer } from './utils/development-server.js';
import { errorBody } from './utils/expected-bodies.js';
import { httpRequest } from './utils/http.js';
import { isRequestLine } from './utils/log-capture.js';
import {
  openSocket,
  rawJsonPost,
  rawRequest,
  readFirstResponse,
  readUntilClosed,
} from './utils/raw-http.js';

const REGISTER = '/api/auth/register';
const LOGIN = '/api/auth/login';
const ENDPOINTS = [REGISTER, LOGIN, '/api/auth/refresh', '/api/auth/revoke'];
const JSON_TYPE = 'application/json; charset=utf-8';
const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';

/** The whole problem-details body of a body refused as a whole (key `$`). */
function bodyProblem(message: string): Record<string, unknown> {
  return {
    type: 'https://tools.ietf.org/html/rfc9110#section-15.5.1',
    title: 'One or more validation errors occurred.',
    status: 400,
    errors: { $: [message] },
  };
}

const TOO_DEEP = 'The request body is nested more than 32 levels deep.';
const REPEATED_KEY = 'The request body names the same key twice in one object.';
const LONE_SURROGATE = 'The request body has a string with a lone UTF-16 surrogate.';
const NOT_UTF8 = 'The request body is not valid UTF-8.';

function nested(depth: number, open: string, close: string, inner = '1'): string {
  return `${open.repeat(depth)}${inner}${close.repeat(depth)}`;
}

describe('the HTTP edge', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ pinoLogs: true });
  });

  afterAll(async () => {
    await t.close();
  });

  /** No line at error level was written while the app ran: no 500, no "Unhandled failure". */
  function expectNoErrorLines(): void {
    expect(t.logs.lines().filter((line) => line.level === 'error')).toEqual([]);
  }

  describe('request bodies', () => {
    it.each([
      ['a few thousand nested objects', nested(5000, '{"a":', '}')],
      ['a few thousand nested arrays', nested(5000, '[', ']')],
      ['nested arrays at a field', `{"email":${nested(40, '[', ']')},"password":"x"}`],
      ['nested objects at a field', `{"email":"a@x.test","password":${nested(33, '{"p":', '}')}}`],
      ['33 levels, mixed', `{"a":${nested(16, '[{"b":', '}]')}}`],
    ])('should refuse %s with 400 problem details, never a 500', async (_case, body) => {
      for (const path of ENDPOINTS) {
        const response = await rawRequest(t.baseUrl, rawJsonPost(path, body));

        expect(response.status).toBe(400);
        expect(response.headers['content-type']).toBe(PROBLEM_TYPE);
        expect(response.json()).toEqual(bodyProblem(TOO_DEEP));
      }
      expectNoErrorLines();
    });

    it('should accept 32 levels, the deepest allowed, and then judge the fields', async () => {
      const body = `{"email":${nested(31, '[', ']')},"password":"x"}`;

      const response = await rawRequest(t.baseUrl, rawJsonPost(LOGIN, body));

      expect(response.status).toBe(400);
      expect(response.json()).toMatchObject({ errors: { email: expect.any(Array) } });
    });

    it.each([
      ['the same key twice', '{"email":"a@x.test","email":"b@x.test","password":"x"}'],
      [
        'a key spelled once plainly and once escaped',
        '{"email":"a@x.test","\\u0065mail":"b@x.test"}',
      ],
      ['a repeated key in a nested object', '{"email":"a@x.test","x":{"k":1,"k":2}}'],
      ['a repeated key whose values are equal', '{"password":"x","password":"x"}'],
    ])('should refuse %s (RFC 7493) with 400 problem details', async (_case, body) => {
      for (const path of ENDPOINTS) {
        const response = await rawRequest(t.baseUrl, rawJsonPost(path, body));

        expect(response.status).toBe(400);
        expect(response.json()).toEqual(bodyProblem(REPEATED_KEY));
      }
    });

    it('should not mistake the same key in two sibling objects for a repeat', async () => {
      const body = '{"a":{"k":1},"b":{"k":2},"email":"nobody@x.test","password":"Wrong!pass1"}';

      const response = await rawRequest(t.baseUrl, rawJsonPost(LOGIN, body));

      expect(response.status).toBe(401);
      expect(response.json()).toEqual(errorBody(401, 'Credenciales inválidas.'));
    });

    it.each([
      ['a lone high surrogate', '\\ud800'],
      ['a lone low surrogate', '\\udfff'],
      ['a pair in the wrong order', '\\ude00\\ud83d'],
      ['a high surrogate before a plain letter', '\\ud83dA'],
    ])('should refuse %s in any string, key or value', async (_case, escaped) => {
      const bodies = [
        `{"username":"alice","email":"a@x.test","password":"S3cure!pass${escaped}"}`,
        `{"username":"alice${escaped}","email":"a@x.test","password":"S3cure!pass"}`,
        `{"email":"a@x.test","password":"x","extra${escaped}":1}`,
      ];
      for (const body of bodies) {
        const response = await rawRequest(t.baseUrl, rawJsonPost(REGISTER, body));

        expect(response.status).toBe(400);
        expect(response.json()).toEqual(bodyProblem(LONE_SURROGATE));
      }
    });

    it('should keep a password that ends in one lone surrogate from matching the others', async () => {
      // Before: stored as U+FFFD, so "\ud800", "\udbff" and "\udfff" all logged in.
      const register = await rawRequest(
        t.baseUrl,
        rawJsonPost(
          REGISTER,
          '{"username":"sam","email":"sam@surrogate.test","password":"S3cure!pass\\ud800"}',
        ),
      );
      expect(register.status).toBe(400);
      const login = await rawRequest(
        t.baseUrl,
        rawJsonPost(LOGIN, '{"email":"sam@surrogate.test","password":"S3cure!pass\\udfff"}'),
      );
      expect(login.status).toBe(400);
      expect(login.json()).toEqual(bodyProblem(LONE_SURROGATE));
    });

    it('should accept a well-formed surrogate pair, escaped or raw, and give it back as sent', async () => {
      const response = await rawRequest(
        t.baseUrl,
        rawJsonPost(
          REGISTER,
          '{"username":"emoji \\ud83d\\ude00 😀","email":"emoji@x.test","password":"S3cure!pass"}',
        ),
      );

      expect(response.status).toBe(201);
      expect(response.json<{ user: { username: string } }>().user.username).toBe('emoji 😀 😀');
    });

    it.each([
      ['a byte that is never UTF-8', Buffer.from([0xff])],
      ['an overlong encoding of "/"', Buffer.from([0xc0, 0xaf])],
      ['a surrogate encoded as bytes (CESU-8)', Buffer.from([0xed, 0xa0, 0x80])],
      ['a truncated sequence', Buffer.from([0xe2, 0x82])],
    ])('should refuse %s instead of reading it as U+FFFD', async (_case, bytes) => {
      const body = Buffer.concat([
        Buffer.from('{"username":"a'),
        bytes,
        Buffer.from('","email":"a@x.test","password":"S3cure!pass"}'),
      ]);

      const response = await rawRequest(t.baseUrl, rawJsonPost(REGISTER, body));

      expect(response.status).toBe(400);
      expect(response.json()).toEqual(bodyProblem(NOT_UTF8));
    });

    it('should still refuse malformed JSON and __proto__ keys under "$"', async () => {
      for (const body of ['{"email":', '', '{"__proto__":{"x":1}}']) {
        const response = await rawRequest(t.baseUrl, rawJsonPost(LOGIN, body));

        expect(response.status).toBe(400);
        expect(response.json()).toEqual(bodyProblem('The request body must be a JSON object.'));
      }
    });
  });

  describe('answers of the HTTP layer', () => {
    async function expectErrorBody(request: string, status: number, message: string) {
      const response = await rawRequest(t.baseUrl, request);

      expect(response.status).toBe(status);
      expect(response.headers['content-type']).toBe(JSON_TYPE);
      expect(response.json()).toEqual(errorBody(status, message));
      return response;
    }

    it.each([
      ['two Host headers', 'GET /api/auth/me HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n'],
      [
        'two Host headers differing in case',
        'GET /health/live HTTP/1.1\r\nHost: a\r\nhOST: a\r\n\r\n',
      ],
      ['an HTTP/1.1 request without Host', 'GET /health/live HTTP/1.1\r\n\r\n'],
      [
        'two Authorization headers',
        'GET /api/auth/me HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer a.b.c\r\nAuthorization: Bearer d.e.f\r\n\r\n',
      ],
      [
        'two Content-Type headers',
        'POST /api/auth/login HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}',
      ],
    ])('should answer %s with 400 and the error body, and close', async (_case, request) => {
      const socket = await openSocket(t.baseUrl);
      socket.write(request);
      const { text, closed } = await readUntilClosed(socket, 5_000);

      expect(closed).toBe(true);
      expect(text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(text.toLowerCase()).toContain(`content-type: ${JSON_TYPE}`);
      expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toEqual(
        errorBody(400, 'Bad Request'),
      );
    });

    it('should answer an HTTP/1.0 request without Host as usual', async () => {
      const response = await rawRequest(t.baseUrl, 'GET /health/live HTTP/1.0\r\n\r\n');

      expect(response.status).toBe(200);
    });

    it.each([
      ['a malformed request line', 'HELLO WORLD\r\n\r\n'],
      ['a header without a colon', 'GET /health/live HTTP/1.1\r\nHost: a\r\nBroken header\r\n\r\n'],
      ['a header name with a space', 'GET /health/live HTTP/1.1\r\nHost: a\r\nBad Name: x\r\n\r\n'],
      [
        'Content-Length and Transfer-Encoding together',
        'POST /api/auth/login HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      ],
      [
        'two different Content-Lengths',
        'POST /api/auth/login HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n{}',
      ],
      ['an HTTP/2 preface on HTTP/1.1', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'],
    ])('should answer %s with 400 and the error body', async (_case, request) => {
      await expectErrorBody(request, 400, 'Bad Request');
    });

    it('should answer headers over the size limit with 431 and the error body', async () => {
      const request = `GET /health/live HTTP/1.1\r\nHost: a\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`;

      await expectErrorBody(request, 431, 'Request Header Fields Too Large');
    });

    it('should answer a path it cannot decode with 400 and the error body, not echoing the path', async () => {
      const response = await expectErrorBody(
        'GET /api/%zz-secret HTTP/1.1\r\nHost: a\r\n\r\n',
        400,
        'Bad Request',
      );

      expect(response.body).not.toContain('secret');
    });

    it('should answer an unknown route with 404 and the error body', async () => {
      await expectErrorBody('GET /api/auth/nothing HTTP/1.1\r\nHost: a\r\n\r\n', 404, 'Not Found');
    });

    it('should answer a body over 64 KiB with 413 and a non-JSON body with 415', async () => {
      const big = `{"email":"${'a'.repeat(70_000)}"}`;
      await expectErrorBody(rawJsonPost(LOGIN, big).toString('latin1'), 413, 'Payload Too Large');
      await expectErrorBody(
        'POST /api/auth/login HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi',
        415,
        'Unsupported Media Type',
      );
    });

    it.each([
      ['GET', LOGIN, 'POST'],
      ['PUT', REGISTER, 'POST'],
      ['PUT', '/api/auth/me', 'GET, HEAD, DELETE'],
      ['POST', '/api/auth/sessions', 'GET, HEAD'],
      ['POST', '/health/live', 'GET, HEAD'],
      ['OPTIONS', '/api/auth/refresh', 'POST'],
    ])(
      'should answer %s %s with 405, the error body and Allow: %s',
      async (method, path, allow) => {
        const response = await expectErrorBody(
          `${method} ${path} HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n`,
          405,
          'Method Not Allowed',
        );

        expect(response.headers.allow).toBe(allow);
      },
    );

    it('should answer an Expect it cannot meet with 417 and the error body', async () => {
      await expectErrorBody(
        'POST /api/auth/login HTTP/1.1\r\nHost: a\r\nExpect: 200-ok\r\nContent-Length: 2\r\n\r\n{}',
        417,
        'Expectation Failed',
      );
    });

    it('should log a client that hangs up mid-body at info as "request aborted", never as an error', async () => {
      const user = await registerUser(t);
      for (const [id, partial] of [
        ['hang-up-mid-body', '{"email":'],
        ['hang-up-after-headers', ''],
      ]) {
        const socket = await openSocket(t.baseUrl);
        socket.write(
          `POST ${LOGIN} HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n` +
            `Content-Length: 200\r\nX-Request-Id: ${id}\r\n\r\n${partial}`,
        );
        // Wait until the request is being handled, then reset the connection.
        await new Promise((resolve) => setTimeout(resolve, 100));
        socket.resetAndDestroy();

        const line = await t.logs.requestLine(id);
        expect(line).toMatchObject({ level: 'info', msg: 'request aborted', route: LOGIN });
        expect(t.logs.forRequest(id).filter((l) => !isRequestLine(l))).toEqual([]);
      }
      // The service is unharmed.
      const login = await rawRequest(
        t.baseUrl,
        rawJsonPost(LOGIN, JSON.stringify({ email: user.email, password: DEFAULT_PASSWORD })),
      );
      expect(login.status).toBe(200);
      expectNoErrorLines();
    });
  });
});

describe('slow clients', () => {
  const DEADLINE_MS = 1_000;
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ environment: { Http__RequestTimeoutSeconds: '1' } });
  });

  afterAll(async () => {
    await t.close();
  });

  it('should cut stalled requests at the deadline with 408 while other requests go on', async () => {
    const stalls = [
      // Headers that never end.
      'GET /health/live HTTP/1.1\r\nHost: a\r\nX-Slow: ',
      // A body that never comes.
      `POST ${LOGIN} HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`,
      // Half a body.
      `POST ${LOGIN} HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"email":`,
      // A chunked body that stops after its first chunk.
      `POST ${LOGIN} HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{"\r\n`,
    ];
    const started = Date.now();
    const sockets = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const socket = await openSocket(t.baseUrl);
        socket.write(stalls[i % stalls.length]);
        return socket;
      }),
    );
    const closings = sockets.map((socket) => readUntilClosed(socket, DEADLINE_MS * 5));

    // Meanwhile, ordinary requests are answered at once, long before the deadline.
    for (let i = 0; i < 20; i += 1) {
      const before = Date.now();
      const response = await t.get('/health/live');
      expect(response.status).toBe(200);
      expect(Date.now() - before).toBeLessThan(DEADLINE_MS / 2);
    }

    const closed = await Promise.all(closings);
    const elapsed = Date.now() - started;
    for (const { text, closed: wasClosed } of closed) {
      expect(wasClosed).toBe(true);
      expect(text).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
      expect(text.toLowerCase()).toContain(`content-type: ${JSON_TYPE}`);
      expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toEqual(
        errorBody(408, 'Request Timeout'),
      );
    }
    // Closed by the deadline: not before it, and within its checking interval after it.
    expect(elapsed).toBeGreaterThanOrEqual(DEADLINE_MS);
    expect(elapsed).toBeLessThan(DEADLINE_MS * 3);
  });

  it('should not cut a request whose client keeps up', async () => {
    const socket = await openSocket(t.baseUrl);
    const reading = readFirstResponse(socket);
    socket.write('GET /health/live HTTP/1.1\r\nHost: a\r\n\r\n');

    await expect(reading).resolves.toMatchObject({ status: 200 });
    socket.destroy();
  });
});

describe('slow readers', () => {
  // The largest answer the service gives: the Swagger UI's bundle, served in development only.
  const BUNDLE = '/swagger-ui-bundle.js';
  const READERS = 24;
  // Four bundles (6 MB) per connection: more than the socket buffers of both ends hold (about
  // 4 MB on Linux's loopback for a client that does not read), so the server cannot finish.
  const PIPELINED = 4;
  let development: DevelopmentServer;
  let bundleLength: number;

  beforeAll(async () => {
    development = await startDevelopmentServer({ Http__ResponseTimeoutSeconds: '1' });
    const bundle = await httpRequest(development.server.baseUrl, BUNDLE);
    expect(bundle.status).toBe(200);
    bundleLength = Buffer.byteLength(bundle.text);
    expect(bundleLength).toBeGreaterThan(1_000_000);
  });

  afterAll(async () => {
    await development.stop();
  });

  /** The readers (by number) of which the process logged an answer cut after its status. */
  function cutReaders(): Set<string> {
    const cut = development.server
      .stdout()
      .split('\n')
      .filter((line) => / INFO: request aborted \{.*"statusCode":200,/.test(line))
      .map((line) => /"requestId":"slow-(\d+)-\d+"/.exec(line)?.[1])
      .filter((reader) => reader !== undefined);
    return new Set(cut);
  }

  it('should close the connection of an answer not taken within the send deadline, while others are served', async () => {
    const { baseUrl } = development.server;
    const readers = await Promise.all(
      Array.from({ length: READERS }, async (_, reader) => {
        const socket = await openSocket(baseUrl);
        // Never read: the answers pile up in the socket buffers until the server must wait.
        socket.pause();
        for (let i = 0; i < PIPELINED; i += 1) {
          socket.write(
            `GET ${BUNDLE} HTTP/1.1\r\nHost: a\r\nX-Request-Id: slow-${reader}-${i}\r\n\r\n`,
          );
        }
        return socket;
      }),
    );

    // Meanwhile ordinary requests are answered, a whole bundle included.
    for (let i = 0; i < 5; i += 1) {
      const registration = await httpRequest(baseUrl, REGISTER, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          username: `reader${i}`,
          email: `reader${i}@example.com`,
          password: DEFAULT_PASSWORD,
        }),
      });
      expect(registration.status).toBe(201);
      const { accessToken, user } = registration.json<{ accessToken: string; user: unknown }>();
      const me = await httpRequest(baseUrl, '/api/auth/me', {
        headers: { authorization: `Bearer ${accessToken}` },
      });
      expect(me.status).toBe(200);
      expect(me.json()).toEqual(user);
      const live = await httpRequest(baseUrl, '/health/live');
      expect(live.status).toBe(200);
      const bundle = await httpRequest(baseUrl, BUNDLE);
      expect(bundle.status).toBe(200);
      expect(Buffer.byteLength(bundle.text)).toBe(bundleLength);
    }

    // Each reader's connection is cut while an answer is going out, logged at info as aborted.
    // The wait is bounded far beyond the deadline, only so a failure ends.
    const giveUpAt = Date.now() + 20_000;
    while (cutReaders().size < READERS && Date.now() < giveUpAt) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(cutReaders().size).toBe(READERS);

    // What the readers find when they read at last: less than they asked for, then the end.
    const endings = await Promise.all(
      readers.map((socket) => {
        const reading = readUntilClosed(socket);
        socket.resume();
        return reading;
      }),
    );
    for (const { text, closed } of endings) {
      expect(closed).toBe(true);
      expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(Buffer.byteLength(text)).toBeLessThan(PIPELINED * bundleLength);
    }
    expect(development.server.stdout()).not.toMatch(/ (ERROR|FATAL): /);
  }, 60_000);
});

describe('the HTTP edge in development, beside the Swagger UI', () => {
  let development: DevelopmentServer;

  beforeAll(async () => {
    development = await startDevelopmentServer();
  });

  afterAll(async () => {
    await development.stop();
  });

  // The UI's static files are served by a catch-all GET route, which must not hide a 405 nor
  // be listed in Allow.
  it.each([
    ['GET', LOGIN, 'POST'],
    ['PUT', LOGIN, 'POST'],
    ['GET', REGISTER, 'POST'],
    ['PUT', '/api/auth/me', 'GET, HEAD, DELETE'],
  ])('should answer %s %s with 405 and Allow: %s', async (method, path, allow) => {
    const response = await rawRequest(
      development.server.baseUrl,
      `${method} ${path} HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n`,
    );

    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe(allow);
    expect(response.headers['content-type']).toBe(JSON_TYPE);
    expect(response.json()).toEqual(errorBody(405, 'Method Not Allowed'));
  });

  it('should still answer a path no route names with 404 and the error body', async () => {
    const response = await rawRequest(
      development.server.baseUrl,
      'GET /api/auth/nothing HTTP/1.1\r\nHost: a\r\n\r\n',
    );

    expect(response.status).toBe(404);
    expect(response.json()).toEqual(errorBody(404, 'Not Found'));
  });
});
