import { decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import { AccessTokenError, IssuerUnavailableError, type AccessTokenRefusal } from './errors.js';
import { issuerKeys } from './issuer-keys.js';
import { canonicalResource, parseServerUrl } from './resource-uri.js';

/** The signature algorithms accepted: asymmetric ones only, never `none` nor HMAC (`HS*`). */
export const ASYMMETRIC_ALGORITHMS = [
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
  'PS256',
  'PS384',
  'PS512',
  'RS256',
  'RS384',
  'RS512',
] as const;
export type AsymmetricAlgorithm = (typeof ASYMMETRIC_ALGORITHMS)[number];

/** Seconds by which `exp` and `nbf` may be off, for clocks of two machines that drift apart. */
export const DEFAULT_CLOCK_TOLERANCE_SECONDS = 30;
/** A longer string is not an access token of any sensible issuer; it is refused unparsed. */
const MAX_TOKEN_LENGTH = 16_384;

export interface VerifyAccessTokenOptions {
  /** The authorization server, exactly as its tokens' `iss` (and its metadata's `issuer`). */
  readonly issuer: string;
  /** This resource's identifier: the token's `aud` must be it (compared canonically). */
  readonly resource: string;
  /** Scopes the token's `scope` claim must all contain; none by default. */
  readonly requiredScopes?: readonly string[];
  /** The issuer's key set, when it is not to be discovered from the issuer's metadata. */
  readonly jwksUri?: string;
  /** The algorithms to accept, a subset of {@link ASYMMETRIC_ALGORITHMS} (all by default). */
  readonly algorithms?: readonly AsymmetricAlgorithm[];
  /** Seconds of clock skew allowed on `exp` and `nbf`; {@link DEFAULT_CLOCK_TOLERANCE_SECONDS}. */
  readonly clockTolerance?: number;
}

/** The claims of a verified access token. */
export interface AccessTokenClaims extends JWTPayload {
  iss: string;
  aud: string | string[];
  exp: number;
  /** The granted scopes, space-separated (RFC 9068 §2.2.3). */
  scope?: string;
  /** The client the token was issued to (RFC 9068 §2.2). */
  client_id?: string;
}

/**
 * Verifies a bearer access token for this resource and resolves to its claims: signed by a key of
 * the issuer's key set with an asymmetric algorithm, `iss` the issuer, `aud` this resource alone
 * (RFC 8707), not expired, and its `scope` holding every required scope. Rejects with an
 * {@link AccessTokenError} saying why (`invalid_token`, `insufficient_scope`), with an
 * {@link IssuerUnavailableError} when the issuer's keys cannot be had, and with a TypeError for
 * options that cannot be right.
 */
export async function verifyAccessToken(
  token: string,
  options: VerifyAccessTokenOptions,
): Promise<AccessTokenClaims> {
  const settings = checkedOptions(options);
  const required = settings.requiredScopes;
  if (
    typeof token !== 'string' ||
    token.length > MAX_TOKEN_LENGTH ||
    token.split('.').length !== 3
  ) {
    throw new AccessTokenError('malformed', 'The token is not a signed JWT.', required);
  }
  let algorithm: unknown;
  try {
    algorithm = decodeProtectedHeader(token).alg;
  } catch (error) {
    throw new AccessTokenError('malformed', 'The token is not a signed JWT.', required, {
      cause: error,
    });
  }
  // Refused before any key is fetched: a flood of such tokens costs the issuer nothing.
  if (!settings.algorithms.includes(algorithm as AsymmetricAlgorithm)) {
    throw new AccessTokenError(
      'algorithm',
      `The token's algorithm ${JSON.stringify(algorithm)} is not accepted.`,
      required,
    );
  }
  const keys = await issuerKeys(options.issuer, options.jwksUri);
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, keys, {
      algorithms: [...settings.algorithms],
      issuer: options.issuer,
      clockTolerance: settings.clockTolerance,
      requiredClaims: ['iss', 'aud', 'exp'],
    }));
  } catch (error) {
    throw refusal(error, required);
  }

  // RFC 8707 and the MCP specification: the token was issued for this resource and no other.
  const audiences = typeof payload.aud === 'string' ? [payload.aud] : (payload.aud ?? []);
  if (audiences.length !== 1 || canonicalResource(audiences[0]) !== settings.resource) {
    throw new AccessTokenError(
      'audience',
      `The token is for ${JSON.stringify(payload.aud)}, not for ${options.resource}.`,
      required,
    );
  }
  if (payload.scope !== undefined && typeof payload.scope !== 'string') {
    throw new AccessTokenError('claims', 'The token\'s "scope" claim is not a string.', required);
  }
  const granted = new Set((payload.scope ?? '').split(' '));
  const missing = required.filter((scope) => !granted.has(scope));
  if (missing.length > 0) {
    throw new AccessTokenError(
      'scope',
      `The token lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(' ')}.`,
      required,
    );
  }
  return payload as AccessTokenClaims;
}

interface CheckedOptions {
  resource: string;
  requiredScopes: readonly string[];
  algorithms: readonly AsymmetricAlgorithm[];
  clockTolerance: number;
}

function checkedOptions(options: VerifyAccessTokenOptions): CheckedOptions {
  const issuer = parseServerUrl(options.issuer, 'issuer');
  if (issuer.search !== '') {
    throw new TypeError('issuer must not have a query (RFC 8414 §2).');
  }
  const resource = canonicalResource(parseServerUrl(options.resource, 'resource').href) ?? '';
  if (options.jwksUri !== undefined) {
    parseServerUrl(options.jwksUri, 'jwksUri');
  }
  const requiredScopes = [...(options.requiredScopes ?? [])];
  if (
    requiredScopes.some(
      (scope) => typeof scope !== 'string' || !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope),
    )
  ) {
    throw new TypeError('requiredScopes must be scope tokens (RFC 6749 §3.3).');
  }
  const algorithms = options.algorithms ?? ASYMMETRIC_ALGORITHMS;
  if (
    algorithms.length === 0 ||
    algorithms.some(
      (algorithm) => !(ASYMMETRIC_ALGORITHMS as readonly string[]).includes(algorithm),
    )
  ) {
    throw new TypeError(`algorithms must be among ${ASYMMETRIC_ALGORITHMS.join(', ')}.`);
  }
  const clockTolerance = options.clockTolerance ?? DEFAULT_CLOCK_TOLERANCE_SECONDS;
  if (!Number.isFinite(clockTolerance) || clockTolerance < 0) {
    throw new TypeError('clockTolerance must be a number of seconds, 0 or more.');
  }
  return { resource, requiredScopes, algorithms, clockTolerance };
}

/** What jose's verdict means for the caller. */
function refusal(error: unknown, required: readonly string[]): Error {
  if (error instanceof IssuerUnavailableError) {
    return error;
  }
  const refuse = (reason: AccessTokenRefusal, message: string) =>
    new AccessTokenError(reason, message, required, { cause: error });
  if (error instanceof errors.JWTExpired) {
    return refuse('expired', 'The token has expired.');
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'iss') {
      return refuse('issuer', 'The token was issued by another issuer.');
    }
    if (error.claim === 'nbf') {
      return refuse('not_yet_valid', 'The token is not valid yet.');
    }
    return refuse('claims', `The token's "${error.claim}" claim is ${error.reason}.`);
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return refuse('signature', "The token's signature does not verify.");
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return refuse('algorithm', "The token's algorithm is not accepted.");
  }
  if (
    error instanceof errors.JWKSNoMatchingKey ||
    error instanceof errors.JWKSMultipleMatchingKeys
  ) {
    return refuse('unknown_key', "The token's key is not in the issuer's key set.");
  }
  if (error instanceof errors.JOSEError) {
    return refuse('malformed', 'The token is not a valid signed JWT.');
  }
  return error instanceof Error ? error : new Error(String(error));
}
