import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import type { JwtConfig } from '../../config/app-config.js';

export const JWT_ALGORITHM = 'HS256';

/** A secret ready for jsonwebtoken, with the id that access tokens carry in their `kid` header. */
export interface JwtKey {
  readonly kid: string;
  /**
   * A KeyObject: jsonwebtoken first tries a string secret as a PEM public key, which costs about
   * 40 times more per sign or verify.
   */
  readonly key: KeyObject;
}

/**
 * The key id is an HMAC of a fixed label under the secret: stable for a secret, different for
 * every other one, and as hard to work back to the secret as the token's own signature is.
 */
export function jwtKey(secret: string): JwtKey {
  const kid = createHmac('sha256', secret).update('keygate-jwt-kid-v1').digest('base64url');
  return { kid: kid.slice(0, 16), key: createSecretKey(Buffer.from(secret, 'utf8')) };
}

/** The key new tokens are signed with. */
export function signingKey(config: JwtConfig): JwtKey {
  return jwtKey(config.secret);
}
