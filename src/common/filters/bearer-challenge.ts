/** RFC 6750 §3: the challenge of a request refused for its missing or invalid bearer token. */
export const BEARER_CHALLENGE = 'Bearer';
/** RFC 6750 §3.1: the token presented is expired, revoked, malformed or invalid. */
export const INVALID_TOKEN_CHALLENGE = 'Bearer error="invalid_token"';

/** An `Authorization` header in the Bearer scheme (case-insensitive, RFC 9110 §11.1) with a value. */
const PRESENTS_BEARER_TOKEN = /^bearer[ \t]+\S/i;

/**
 * The `WWW-Authenticate` value for the guard's 401. RFC 6750 §3.1: a request without any
 * authentication gets no error code; one that presented a token gets `invalid_token`, whatever
 * was wrong with it (SPEC §5 refuses any deviation from `Bearer <token>` alike).
 */
export function bearerChallenge(authorization: string | string[] | undefined): string {
  return typeof authorization === 'string' && PRESENTS_BEARER_TOKEN.test(authorization)
    ? INVALID_TOKEN_CHALLENGE
    : BEARER_CHALLENGE;
}
