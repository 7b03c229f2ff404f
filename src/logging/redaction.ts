/** What a redacted value is replaced with. */
export const REDACTED = '[Redacted]';

const SECRET_FIELDS = [
  'password',
  'accessToken',
  'refreshToken',
  // The second factor: a code, a TOTP secret, recovery codes (beyond the interface).
  'code',
  'secret',
  'otpauthUri',
  'recoveryCodes',
  // A mailed link's token, and the second factor's code beside a mailed code (beyond the interface).
  'token',
  'secondFactorCode',
] as const;

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
  // Fields of an object given to pino directly, or after a message to Nest's Logger (nestjs-pino
  // spreads those onto the line: flattenParams), and of an object message, which nestjs-pino's
  // NativeLogger writes under `msg`.
  ...SECRET_FIELDS.flatMap((field) => [field, `msg.${field}`]),
];
