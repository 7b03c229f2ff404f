import { hash } from 'node:crypto';
import { setBounded } from '../common/collections/bounded-map.js';
import type { AccessTokenClaims } from '../common/decorators/current-user.decorator.js';

/** What verification established about a token: its claims, and when it stops being valid. */
export interface VerifiedToken {
  readonly claims: AccessTokenClaims;
  /** `exp`, in seconds since the epoch. */
  readonly exp: number;
  /** The key that verified it: once that key is retired, the token is not taken from here. */
  readonly kid: string;
}

/** Enough for every client active within an access token's lifetime on one busy instance. */
export const VERIFIED_TOKEN_CACHE_CAPACITY = 10_000;

/**
 * Access tokens that already passed the signature, algorithm, issuer and audience checks, so a
 * client sending the same token with every request pays for HMAC and JSON parsing once. Entries
 * are found by the token's SHA-256, so a lookup never compares a secret string. Expiry stays
 * the caller's to check on every use. Bounded: when full, the oldest entry goes.
 */
export class VerifiedTokenCache {
  private readonly entries = new Map<string, VerifiedToken>();

  constructor(private readonly capacity = VERIFIED_TOKEN_CACHE_CAPACITY) {}

  get size(): number {
    return this.entries.size;
  }

  get(token: string): VerifiedToken | undefined {
    return this.entries.get(digest(token));
  }

  remember(token: string, verified: VerifiedToken): void {
    setBounded(this.entries, digest(token), verified, this.capacity);
  }

  forget(token: string): void {
    this.entries.delete(digest(token));
  }
}

function digest(token: string): string {
  return hash('sha256', token, 'base64');
}
