import { hash, randomBytes } from 'node:crypto';

/** 256 bits from the CSPRNG. */
const REFRESH_TOKEN_BYTES = 32;

/** A new raw refresh token (base64url) and the digest under which it is stored. */
export function generateRefreshTokenValue(): { raw: string; hash: string } {
  const raw = randomBytes(REFRESH_TOKEN_BYTES).toString('base64url');
  return { raw, hash: hashRefreshToken(raw) };
}

/**
 * Refresh tokens are stored and looked up only by this digest. A plain SHA-256 is enough: the
 * input has 256 bits of entropy, so there is nothing to brute-force.
 */
export function hashRefreshToken(raw: string): string {
  return hash('sha256', raw, 'hex');
}
