import { tracingChannel } from 'node:diagnostics_channel';
import { pino, type Logger } from 'pino';
import { REQUEST_ID_KEY } from './log-fields.js';
import type { RequestLine } from './request-line.js';

const INFO = 30;
const MESSAGE_KEY = 'msg';

/** The fields of a RequestLine, in the order pino writes them (the object's own order). */
const FIELDS = [REQUEST_ID_KEY, 'method', 'route', 'statusCode', 'responseTime'] as const;

/** pino's internals this writer reads: exported by pino as `pino.symbols`, stable since pino 6. */
const {
  chindingsSym,
  endSym,
  formattersSym,
  hooksSym,
  lsCacheSym,
  messageKeySym,
  mixinSym,
  needsMetadataGsym,
  nestedKeySym,
  serializersSym,
  streamSym,
  stringifiersSym,
  timeSym,
} = pino.symbols;

/** Not in pino's typings; present since pino 8.14 (a child's `msgPrefix`). */
const msgPrefixSym = (pino.symbols as unknown as Record<string, symbol | undefined>).msgPrefixSym;

type Internals = Record<symbol, unknown>;

/** pino reports each line it builds to this channel's subscribers (an APM, a test), if any. */
const asJsonChannel = tracingChannel('pino_asJson');

/**
 * Writes a request line byte for byte as `logger.info(line, message)` would, without pino's
 * generic path: no walk over the object looking for serializers and redaction paths, no format
 * of the message, no redaction of a message that is one of two constants. The line's five fields
 * (RequestLine) are fixed and carry no secret, so what is left is pino's own level label, time and
 * bindings, the fields as JSON, and one synchronous write to pino's stream, as before.
 *
 * Only for a logger whose configuration it can reproduce: `forLogger` answers undefined for one
 * with a mixin, hooks, a log formatter, a nested key, a message prefix, another message key,
 * serializers or redaction of these fields, or a stream that wants pino's metadata; the caller
 * then logs through pino. request-line-writer.spec.ts compares its output with pino's.
 */
export class RequestLineWriter {
  private constructor(
    private readonly logger: Logger,
    private readonly internals: Internals,
    private readonly prefix: string,
    private readonly end: string,
    private readonly time: () => string,
  ) {}

  static forLogger(logger: Logger): RequestLineWriter | undefined {
    const internals = logger as unknown as Internals;
    const formatters = internals[formattersSym] as { readonly log?: unknown };
    const hooks = internals[hooksSym] as { readonly logMethod?: unknown; streamWrite?: unknown };
    const serializers = internals[serializersSym] as Record<string, unknown>;
    const stringifiers = internals[stringifiersSym] as Record<string | symbol, unknown>;
    const stream = internals[streamSym] as Record<symbol, unknown>;
    const reproducible =
      internals[mixinSym] === undefined &&
      formatters.log === undefined &&
      hooks.logMethod === undefined &&
      hooks.streamWrite === undefined &&
      internals[nestedKeySym] === null &&
      (msgPrefixSym === undefined || internals[msgPrefixSym] === undefined) &&
      internals[messageKeySym] === MESSAGE_KEY &&
      serializers[MESSAGE_KEY] === undefined &&
      stream[needsMetadataGsym] !== true &&
      stringifiers[pino.symbols.wildcardFirstSym] === undefined &&
      FIELDS.every((key) => serializers[key] === undefined && stringifiers[key] === undefined);
    if (!reproducible) {
      return undefined;
    }
    const prefix = (internals[lsCacheSym] as Record<number, string>)[INFO];
    const time = internals[timeSym] as () => string;
    return new RequestLineWriter(
      logger,
      internals,
      prefix,
      internals[endSym] as string,
      time === pino.stdTimeFunctions.isoTime ? isoTimeOfTheMillisecond() : time,
    );
  }

  /** What `logger.info(line, message)` writes, at the same level check. */
  write(line: RequestLine, message: string): void {
    const { logger, internals } = this;
    if (!logger.isLevelEnabled('info')) {
      return;
    }
    if (asJsonChannel.hasSubscribers) {
      logger.info(line, message);
      return;
    }
    const time = this.time();
    let text =
      this.prefix +
      time +
      (internals[chindingsSym] as string) +
      `,"${REQUEST_ID_KEY}":` +
      json(line.requestId);
    text += `,"method":${json(line.method)}`;
    if (line.route !== undefined) {
      text += `,"route":${json(line.route)}`;
    }
    if (line.statusCode !== undefined) {
      text += `,"statusCode":${number(line.statusCode)}`;
    }
    text += `,"responseTime":${number(line.responseTime)}`;
    // pino passes the message through the redaction of `msg.*` paths when there are any; a
    // string has no fields to redact, so it comes out as JSON.
    text += `,"${MESSAGE_KEY}":${json(message)}${this.end}`;
    (internals[streamSym] as { write(text: string): void }).write(text);
  }
}

/**
 * pino's isoTime, `,"time":"<ISO 8601>"` for Date.now(), with the text kept for the millisecond
 * it was made in: under load several lines share one, and formatting a Date is a sixth of a line.
 */
function isoTimeOfTheMillisecond(): () => string {
  let madeAt = Number.NaN;
  let text = '';
  return () => {
    const now = Date.now();
    if (now !== madeAt) {
      madeAt = now;
      text = `,"time":"${new Date(now).toISOString()}"`;
    }
    return text;
  };
}

/**
 * A string as pino writes it: its own escaping of `"` and `\` for short strings, JSON.stringify
 * otherwise, the same text for every string without control characters or lone surrogates. A
 * request line's strings are a request id (REQUEST_ID_PATTERN or a UUID), an HTTP method and a
 * route pattern from the code, none of which can hold either.
 */
function json(value: string): string {
  return JSON.stringify(value);
}

/** A number as pino writes it: non-finite ones as null. */
function number(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}
