/** RFC 6750's error codes a resource server answers a refused token with. */
export type AccessTokenErrorCode = 'invalid_token' | 'insufficient_scope';

/** Why a token was refused, for logs and tests; the client is told only the `code`. */
export type AccessTokenRefusal =
  | 'malformed'
  | 'algorithm'
  | 'unknown_key'
  | 'signature'
  | 'issuer'
  | 'audience'
  | 'expired'
  | 'not_yet_valid'
  | 'claims'
  | 'scope';

/**
 * A token the resource server must refuse: `code` `invalid_token` (answer 401) or
 * `insufficient_scope` (answer 403), `status` the matching HTTP status, `reason` the check that
 * failed, and `requiredScopes` the scopes the request needs (what a 403's challenge names).
 */
export class AccessTokenError extends Error {
  readonly code: AccessTokenErrorCode;
  readonly status: 401 | 403;
  readonly reason: AccessTokenRefusal;
  readonly requiredScopes: readonly string[];

  constructor(
    reason: AccessTokenRefusal,
    message: string,
    requiredScopes: readonly string[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AccessTokenError';
    this.reason = reason;
    this.code = reason === 'scope' ? 'insufficient_scope' : 'invalid_token';
    this.status = reason === 'scope' ? 403 : 401;
    this.requiredScopes = requiredScopes;
  }
}

/**
 * The issuer's keys could not be obtained (its metadata or key set unreachable, slow or invalid):
 * nothing is known about the token, so answer 503, not 401. `cause` holds the underlying error.
 */
export class IssuerUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'IssuerUnavailableError';
  }
}
