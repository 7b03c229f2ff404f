/** What a redacted value is replaced with. */
export const REDACTED = '[Redacted]';

/**
 * pino `redact` paths for every secret that could reach a log object. Request lines are built
 * from a few chosen fields and never carry headers or bodies, so none of these paths matches
 * today: they catch the day someone logs a request, a response or a DTO whole.
 */
export const REDACTED_PATHS: readonly string[] = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-refresh-token"]',
  'res.headers["set-cookie"]',
  'req.body',
  'password',
  'accessToken',
  'refreshToken',
  '*.password',
  '*.accessToken',
  '*.refreshToken',
];
