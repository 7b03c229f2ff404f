import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import { pino, type DestinationStream } from 'pino';
import type { Options } from 'pino-http';
import type { AppConfig } from '../config/app-config.js';
import { REDACTED, REDACTED_PATHS } from './redaction.js';
import { summarizeRequest, summarizeResponse } from './request-line.js';

/** The field that carries the request id on every line logged while a request runs. */
export const REQUEST_ID_KEY = 'requestId';

/**
 * nestjs-pino's parameters: one pino-http middleware that writes a line per request and gives
 * every line logged during the request its id. JSON lines in production; in development the same
 * lines made readable.
 */
export async function loggerParams(
  config: AppConfig,
  destination?: DestinationStream,
): Promise<Params> {
  const options: Options = {
    level: config.logging.level,
    timestamp: pino.stdTimeFunctions.isoTime,
    // Level names read better than pino's numbers in a log search. pino-pretty shows names anyway.
    ...(config.isDevelopment ? {} : { formatters: { level: (label) => ({ level: label }) } }),
    redact: { paths: [...REDACTED_PATHS], censor: REDACTED },
    // Handed the raw objects, not pino-std-serializers' full copies, which this hot path pays for
    // on every request.
    wrapSerializers: false,
    serializers: { req: summarizeRequest, res: summarizeResponse, err: pino.stdSerializers.err },
    customAttributeKeys: { reqId: REQUEST_ID_KEY },
    // pino-http keeps `req.id` when it is set, and @fastify/middie sets it to Fastify's request id
    // (the one createHttpAdapter assigned) before any middleware runs. So this is only reached if
    // that ever changes, and even then it must not invent a second id.
    genReqId: (req) => req.id,
    // Lines logged during a request carry its id only; the request line carries the rest once.
    quietReqLogger: true,
    quietResLogger: true,
    customSuccessObject: requestLine,
    // A 5xx is logged at error level by the exception filter; its request line stays at info,
    // without the stack pino-http would make up for it.
    customErrorObject: (req, res, _error, value: RequestLineValue) => requestLine(req, res, value),
    customSuccessMessage: requestMessage,
    customErrorMessage: requestMessage,
  };
  const target = destination ?? stdout();
  const stream = config.isDevelopment ? await readable(target, destination === undefined) : target;
  return { pinoHttp: [options, stream] };
}

/**
 * Synchronous, like the ConsoleLogger it replaces: a line is out before the next statement
 * runs, so the last lines before a crash or an exit are never lost in a buffer.
 */
function stdout(): DestinationStream {
  return pino.destination({ dest: 1, sync: true });
}

interface RequestLineValue {
  readonly responseTime: number;
}

function requestLine(req: IncomingMessage, res: ServerResponse, value: RequestLineValue) {
  return { req, res, responseTime: value.responseTime };
}

function requestMessage(_req: IncomingMessage, res: ServerResponse): string {
  return res.writableEnded ? 'request completed' : 'request aborted';
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
