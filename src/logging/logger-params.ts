import type { Params } from 'nestjs-pino';
import { pino, type DestinationStream, type LoggerOptions } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import { REDACTED, REDACTED_PATHS } from './redaction.js';

/**
 * nestjs-pino's parameters: the one pino logger of the application. JSON lines in production; in
 * development the same lines made readable. Requests are logged by RequestLogging, so
 * nestjs-pino's own request middleware is mounted nowhere.
 */
export async function loggerParams(
  config: AppConfig,
  destination?: DestinationStream,
): Promise<Params> {
  const options: LoggerOptions = {
    level: config.logging.level,
    timestamp: pino.stdTimeFunctions.isoTime,
    // Level names read better than pino's numbers in a log search. pino-pretty shows names anyway.
    ...(config.isDevelopment ? {} : { formatters: { level: (label) => ({ level: label }) } }),
    redact: { paths: [...REDACTED_PATHS], censor: REDACTED },
  };
  const target = destination ?? stdout();
  const stream = config.isDevelopment ? await readable(target, destination === undefined) : target;
  return {
    pinoHttp: [options, stream],
    forRoutes: [],
    // Fields passed after a message to Nest's Logger (forRequest) go on the line itself, where
    // `requestId` sits on request lines too, not under `params`.
    nativeLogger: { flattenParams: true },
  };
}

/**
 * Synchronous, like the ConsoleLogger it replaces: a line is out before the next statement
 * runs, so the last lines before a crash or an exit are never lost in a buffer.
 */
function stdout(): DestinationStream {
  return pino.destination({ dest: 1, sync: true });
}

/**
 * pino-pretty is a development dependency, so it is loaded only in development mode. Its
 * prettifier runs in this thread, synchronously: a line logged just before an exit is not lost.
 */
async function readable(
  target: DestinationStream,
  toTerminal: boolean,
): Promise<DestinationStream> {
  const { default: pinoPretty } = await import('pino-pretty');
  const prettify = pinoPretty.prettyFactory({
    // isColorSupported looks at stdout and NO_COLOR.
    colorize: toTerminal && pinoPretty.isColorSupported,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,context',
    singleLine: true,
    messageFormat: (log, messageKey) =>
      typeof log.context === 'string'
        ? `[${log.context}] ${String(log[messageKey])}`
        : String(log[messageKey]),
  });
  return { write: (line: string) => target.write(prettify(line)) };
}
