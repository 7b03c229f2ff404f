import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { DestinationStream } from 'pino';
import { pinoHttp, type Options } from 'pino-http';
import { AppConfig, type LoggingConfig } from '../config/app-config.js';
import { loggerParams } from './logger-params.js';
import { rememberRoute } from './request-line.js';

/** The root logger nestjs-pino builds from loggerParams, writing into `lines`. */
async function loggerFor(isDevelopment: boolean, level: LoggingConfig['level'] = 'info') {
  const lines: string[] = [];
  const config = Object.assign(new AppConfig(), { isDevelopment, logging: { level } });
  const { pinoHttp: params } = await loggerParams(config, {
    write: (line: string) => lines.push(line),
  });
  const [options, stream] = params as [Options, DestinationStream];
  return { logger: pinoHttp(options, stream).logger, lines };
}

function request(): IncomingMessage {
  const req = Object.assign(new IncomingMessage(new Socket()), {
    method: 'POST',
    url: '/api/auth/refresh?token=query-secret',
    headers: { authorization: 'Bearer header-secret', 'content-type': 'application/json' },
  });
  rememberRoute(req, '/api/auth/refresh');
  return req;
}

describe(loggerParams.name, () => {
  it('should write JSON lines with level names and ISO times in production', async () => {
    const { logger, lines } = await loggerFor(false);

    logger.child({ requestId: 'r-1' }).warn({ context: 'AuthService' }, 'User u-1 locked out');

    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toEqual({
      level: 'warn',
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      pid: process.pid,
      hostname: expect.any(String),
      requestId: 'r-1',
      context: 'AuthService',
      msg: 'User u-1 locked out',
    });
  });

  it('should write readable lines with the context and the request id in development', async () => {
    const { logger, lines } = await loggerFor(true);

    logger.child({ requestId: 'r-2' }).info({ context: 'AuthService' }, 'User u-2 logged in');

    expect(lines).toEqual([
      expect.stringMatching(
        /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: \[AuthService\] User u-2 logged in \{"requestId":"r-2"\}\n$/,
      ),
    ]);
  });

  it('should reduce a request to its method and route, and a response to its status', async () => {
    const { logger, lines } = await loggerFor(false);
    const req = request();
    const res = Object.assign(new ServerResponse(req), { statusCode: 201 });
    res.setHeader('set-cookie', 'sid=cookie-secret');

    logger.info({ req, res, responseTime: 3 }, 'request completed');

    expect(JSON.parse(lines[0])).toMatchObject({
      req: { method: 'POST', route: '/api/auth/refresh' },
      res: { statusCode: 201 },
    });
    expect(Object.keys(JSON.parse(lines[0]) as object)).not.toContain('headers');
    expect(lines[0]).not.toMatch(/secret|authorization|cookie|\?/);
  });

  it.each<[LoggingConfig['level'], string[]]>([
    ['info', ['info', 'warn', 'error']],
    ['warn', ['warn', 'error']],
    ['error', ['error']],
    ['silent', []],
  ])('should write only what Logging__Level=%s lets through', async (level, expected) => {
    const { logger, lines } = await loggerFor(false, level);

    logger.debug('debug');
    logger.info('info');
    logger.warn('warn');
    logger.error('error');

    expect(lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual(expected);
  });
});
