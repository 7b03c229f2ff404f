/**
 * SPEC §5, the one rule of every bearer guard (the account routes' JwtStrategy and the admin
 * API's AdminKeyGuard): the `Authorization` header is exactly `Bearer`, in that case, one space,
 * then the credentials, which have no whitespace. `bearer …`, `BEARER …`, two spaces, a tab or a
 * repeated header carry no credentials: the guard answers as to a request without any.
 */
const BEARER_CREDENTIALS = /^Bearer (\S+)$/;

/** The credentials of an `Authorization` header in the Bearer scheme; null when it carries none. */
export function bearerCredentials(
  authorization: string | readonly string[] | undefined,
): string | null {
  return typeof authorization === 'string'
    ? (BEARER_CREDENTIALS.exec(authorization)?.[1] ?? null)
    : null;
}
