import { jest } from '@jest/globals';
import type { Logger } from 'pino';
import { pinoHttp, type Options } from 'pino-http';
import { serviceLogger } from '../../test/utils/service-logger.js';
import type { RequestLine } from './request-line.js';
import { RequestLineWriter } from './request-line-writer.js';

/** What pino's own `info(line, message)` writes, and what the writer writes, for the same line. */
function bothWrites(logger: Logger, lines: string[], line: RequestLine, message: string) {
  const writer = RequestLineWriter.forLogger(logger);
  expect(writer).toBeDefined();
  lines.length = 0;
  logger.info(line, message);
  writer?.write(line, message);
  return { pino: lines[0], writer: lines[1], count: lines.length };
}

const LINES: readonly (readonly [string, RequestLine, string])[] = [
  [
    'an answered request',
    {
      requestId: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
      method: 'GET',
      route: '/api/auth/me',
      statusCode: 200,
      responseTime: 0.4,
    },
    'request completed',
  ],
  [
    'a request that matched no route',
    {
      requestId: 'a.b:c_d-E',
      method: 'DELETE',
      route: undefined,
      statusCode: 404,
      responseTime: 12,
    },
    'request completed',
  ],
  [
    'a request whose client hung up',
    {
      requestId: 'hung-up-1',
      method: 'POST',
      route: '/api/auth/register',
      statusCode: undefined,
      responseTime: 1234.5,
    },
    'request aborted',
  ],
  [
    'a failed request with a long client id',
    {
      requestId: 'x'.repeat(128),
      method: 'OPTIONS',
      route: '/api/auth/:id/sessions',
      statusCode: 500,
      responseTime: 0,
    },
    'request completed',
  ],
];

describe(RequestLineWriter.name, () => {
  beforeEach(() => {
    // Both writes of a test read the clock: one instant, so that their time fields agree.
    jest.useFakeTimers({ now: new Date('2026-11-24T11:43:07.123Z'), doNotFake: ['nextTick'] });
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  it.each(LINES)(
    'should write %s byte for byte as pino does, in production',
    async (_, line, message) => {
      const { logger, lines } = await serviceLogger(false);

      const written = bothWrites(logger, lines, line, message);

      expect(written.count).toBe(2);
      expect(written.writer).toBe(written.pino);
      expect(JSON.parse(written.writer)).toMatchObject({ level: 'info', msg: message });
    },
  );

  it.each(LINES)('should write %s as pino does, in development', async (_, line, message) => {
    const { logger, lines } = await serviceLogger(true);

    const written = bothWrites(logger, lines, line, message);

    expect(written.count).toBe(2);
    expect(written.writer).toBe(written.pino);
  });

  it("should write a child logger's bindings where pino puts them", async () => {
    const { logger, lines } = await serviceLogger(false);
    const child = logger.child({ instance: 'k-1' });

    const written = bothWrites(child, lines, LINES[0][1], LINES[0][2]);

    expect(written.writer).toBe(written.pino);
    expect(written.writer).toContain('"instance":"k-1"');
  });

  it("should write each line with its own millisecond's time, as pino does", async () => {
    const { logger, lines } = await serviceLogger(false);
    const writer = RequestLineWriter.forLogger(logger);

    for (const step of [0, 0, 1, 999, 0]) {
      jest.advanceTimersByTime(step);
      logger.info(LINES[0][1], LINES[0][2]);
      writer?.write(LINES[0][1], LINES[0][2]);
    }

    expect(lines).toHaveLength(10);
    for (let i = 0; i < lines.length; i += 2) {
      expect(lines[i + 1]).toBe(lines[i]);
    }
    expect(new Set(lines).size).toBe(3);
  });

  it('should write nothing when info lines are off, like pino', async () => {
    const { logger, lines } = await serviceLogger(false, 'warn');

    RequestLineWriter.forLogger(logger)?.write(LINES[0][1], LINES[0][2]);

    expect(lines).toEqual([]);
  });

  it('should follow a level changed after it was made', async () => {
    const { logger, lines } = await serviceLogger(false);
    const writer = RequestLineWriter.forLogger(logger);

    logger.level = 'error';
    writer?.write(LINES[0][1], LINES[0][2]);
    logger.level = 'info';
    writer?.write(LINES[0][1], LINES[0][2]);

    expect(lines).toHaveLength(1);
  });

  it.each<[string, Options]>([
    ['a mixin', { mixin: () => ({ extra: 1 }) }],
    ['a log formatter', { formatters: { log: (object) => object } }],
    ['a nested key', { nestedKey: 'payload' }],
    ['another message key', { messageKey: 'message' }],
    ['a serializer of one of its fields', { serializers: { method: () => 'X' } }],
    ['redaction of one of its fields', { redact: ['route'] }],
    ['a wildcard redaction', { redact: ['*.secret'] }],
    ['a hook on the log method', { hooks: { logMethod: () => undefined } }],
  ])('should decline a logger with %s, whose lines it cannot reproduce', (_, options) => {
    const { logger } = pinoHttp(options, { write: () => undefined });

    expect(RequestLineWriter.forLogger(logger)).toBeUndefined();
  });
});
