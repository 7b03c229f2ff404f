import {
  createLocalJWKSet,
  createRemoteJWKSet,
  jwtVerify,
  type JSONWebKeySet,
  type JWTVerifyGetKey,
  type RemoteJWKSetOptions,
} from 'jose';
import type { KeygateIdentity } from './keygate-verifier.js';

/** What your API must know of a Keygate that signs with keys: where it publishes them. */
export interface KeygateJwksSettings {
  /** Keygate's `/.well-known/jwks.json`. */
  readonly jwksUrl: URL;
  /** Jwt__Issuer. */
  readonly issuer: string;
  /** Jwt__Audience. */
  readonly audience: string;
}

/** Jwt__SigningAlgorithm's asymmetric values: a key verifies only tokens of its own `alg`. */
const ALGORITHMS = ['ES256', 'EdDSA', 'RS256'];

/**
 * Verifies Keygate access tokens with the public keys Keygate publishes. jose fetches the set
 * when it first needs it, keeps it `cacheMaxAge` (10 minutes unless told), and fetches it again
 * for a `kid` it does not know, at most once per `cooldownDuration` (30 seconds): a rotation
 * needs nothing from you. Resolves to null for any token that fails, whatever the reason.
 */
export function keygateJwksVerifier(
  settings: KeygateJwksSettings,
  options: RemoteJWKSetOptions = {},
): (token: string) => Promise<KeygateIdentity | null> {
  return verifierWith(createRemoteJWKSet(settings.jwksUrl, options), settings);
}

/**
 * Offline: the same with a copy of the JWKS pinned in your configuration, and no request to
 * Keygate. Add a new key to the copy once Keygate publishes it as next (`keys:rotate` prints
 * when it starts signing), and drop a key once Keygate no longer publishes it.
 */
export function keygatePinnedVerifier(
  jwks: JSONWebKeySet,
  settings: Omit<KeygateJwksSettings, 'jwksUrl'>,
): (token: string) => Promise<KeygateIdentity | null> {
  return verifierWith(createLocalJWKSet(jwks), settings);
}

function verifierWith(
  keys: JWTVerifyGetKey,
  settings: Omit<KeygateJwksSettings, 'jwksUrl'>,
): (token: string) => Promise<KeygateIdentity | null> {
  return async (token) => {
    try {
      const { payload } = await jwtVerify(token, keys, {
        algorithms: ALGORITHMS,
        issuer: settings.issuer,
        audience: settings.audience,
        requiredClaims: ['sub', 'exp'],
      });
      const { sub, sid, email } = payload;
      if (typeof sub !== 'string' || typeof email !== 'string') {
        return null;
      }
      return { userId: sub, sessionId: typeof sid === 'string' ? sid : undefined, email };
    } catch {
      return null;
    }
  };
}
