import type { DestinationStream } from 'pino';
import { NativeLogger, type PinoLogger } from 'nestjs-pino';
import { pinoHttp, type Options } from 'pino-http';
import { AppConfig, type LoggingConfig } from '../config/app-config.js';
import { forRequest } from './log-fields.js';
import { serviceLogger } from '../../test/utils/service-logger.js';
import { loggerParams } from './logger-params.js';

/** nestjs-pino's NativeLogger (what Nest's Logger writes through) over that root logger. */
async function nativeLoggerFor() {
  const lines: string[] = [];
  const config = Object.assign(new AppConfig(), {
    isDevelopment: false,
    logging: { level: 'info' },
  });
  const params = await loggerParams(config, { write: (line: string) => lines.push(line) });
  const [options, stream] = params.pinoHttp as [Options, DestinationStream];
  const root = pinoHttp(options, stream).logger;
  // NativeLogger only calls the level methods of the PinoLogger it is given.
  const pinoLogger = {
    info: root.info.bind(root),
    warn: root.warn.bind(root),
    error: root.error.bind(root),
  } as unknown as PinoLogger;
  return { native: new NativeLogger(pinoLogger, params), lines };
}

describe(loggerParams.name, () => {
  it('should write JSON lines with level names and ISO times in production', async () => {
    const { logger, lines } = await serviceLogger(false);

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
    const { logger, lines } = await serviceLogger(true);

    logger.child({ requestId: 'r-2' }).info({ context: 'AuthService' }, 'User u-2 logged in');

    expect(lines).toEqual([
      expect.stringMatching(
        /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: \[AuthService\] User u-2 logged in \{"requestId":"r-2"\}\n$/,
      ),
    ]);
  });

  it("should spread the fields given after a message to Nest's Logger onto the line", async () => {
    const { native, lines } = await nativeLoggerFor();

    native.log('User u-3 logged in', forRequest('r-3'), 'AuthService');

    expect(JSON.parse(lines[0])).toMatchObject({
      requestId: 'r-3',
      context: 'AuthService',
      msg: 'User u-3 logged in',
    });
    expect(JSON.parse(lines[0])).not.toHaveProperty('params');
  });

  it("should censor secrets handed to Nest's Logger", async () => {
    const { native, lines } = await nativeLoggerFor();

    native.log('oops', { password: 'p-secret', refreshToken: 'r-secret' }, 'AuthService');
    native.error({ accessToken: 'a-secret' }, 'AuthService');

    expect(lines.join('')).not.toMatch(/p-secret|r-secret|a-secret/);
    expect(JSON.parse(lines[0])).toMatchObject({
      password: '[Redacted]',
      refreshToken: '[Redacted]',
    });
  });

  it("should write a stack given to Nest's Logger after the request's fields", async () => {
    const { native, lines } = await nativeLoggerFor();
    const { stack } = new Error('boom');

    native.error('Unhandled failure', forRequest('r-4'), stack, 'AllExceptionsFilter');

    expect(JSON.parse(lines[0])).toMatchObject({
      requestId: 'r-4',
      context: 'AllExceptionsFilter',
      stack,
      msg: 'Unhandled failure',
    });
  });

  it("should mount nestjs-pino's request middleware nowhere: RequestLogging does its work", async () => {
    const config = Object.assign(new AppConfig(), {
      isDevelopment: false,
      logging: { level: 'info' },
    });

    expect((await loggerParams(config, { write: () => undefined })).forRoutes).toEqual([]);
  });

  it.each<[LoggingConfig['level'], string[]]>([
    ['info', ['info', 'warn', 'error']],
    ['warn', ['warn', 'error']],
    ['error', ['error']],
    ['silent', []],
  ])('should write only what Logging__Level=%s lets through', async (level, expected) => {
    const { logger, lines } = await serviceLogger(false, level);

    logger.debug('debug');
    logger.info('info');
    logger.warn('warn');
    logger.error('error');

    expect(lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual(expected);
  });
});
