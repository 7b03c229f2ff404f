/** What a redacted value is replaced with. */
export const REDACTED = '[Redacted]';

const SECRET_FIELDS = ['password', 'accessToken', 'refreshToken'] as const;

/**
 * pino `redact` paths for every secret that could reach a log object. Request lines are a few
 * chosen fields and never carry headers or bodies, so none of these matches today: they catch
 * the day someone logs a request, a response, a body or a DTO.
 *
 * No leading wildcards (`*.password`): those make pino walk every key of every line, which
 * costs more than the rest of a request line together.
 */
export const REDACTED_PATHS: readonly string[] = [
  // Headers, as pino-std-serializers would log a request or a response whole.
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-refresh-token"]',
  'res.headers["set-cookie"]',
  // Bodies, wherever they are put.
  'body',
  'req.body',
  'msg.body',
  'params.body',
  // Fields of an object given to pino directly, or to Nest's Logger: nestjs-pino's NativeLogger
  // writes an object message under `msg` and objects after the message under `params`.
  ...SECRET_FIELDS.flatMap((field) => [
    field,
    `msg.${field}`,
    `params.${field}`,
    `params.*.${field}`,
  ]),
];
