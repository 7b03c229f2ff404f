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

/**
 * The keys that verify tokens, by id: the current one, and the previous ones that an operator
 * keeps while tokens signed with them are still unexpired.
 */
export class VerificationKeys {
  private readonly byKid = new Map<string, KeyObject>();
  private readonly current: KeyObject;

  constructor(config: JwtConfig) {
    const current = signingKey(config);
    this.current = current.key;
    for (const { kid, key } of [current, ...config.previousSecrets.map(jwtKey)]) {
      if (!this.byKid.has(kid)) {
        this.byKid.set(kid, key);
      }
    }
  }

  /**
   * The key for a token's header. A token without `kid` was signed before key ids existed, so
   * with the key that was current then: the current one unless a rotation happened since.
   * Undefined for a key id this service does not know.
   */
  forHeader(header: { readonly kid?: unknown }): KeyObject | undefined {
    if (header.kid === undefined) {
      return this.current;
    }
    return typeof header.kid === 'string' ? this.byKid.get(header.kid) : undefined;
  }
}
