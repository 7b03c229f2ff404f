import { hash } from 'node:crypto';
import type { RandomSource } from '../../common/random/random-source.js';

/**
 * A new raw refresh token (base64url) and the digest under which it is stored: the SHA-256 as
 * 32 bytes (decision 0027), half the size of its hex text in the row and in the key.
 */
export function generateRefreshTokenValue(random: RandomSource): { raw: string; hash: Buffer } {
  // 256 bits from the RandomSource, as every opaque token (common/crypto/opaque-token.ts).
  const raw = random.bytes(32).toString('base64url');
  return { raw, hash: hashRefreshToken(raw) };
}

/** Refresh tokens are stored and looked up only by this digest. */
export function hashRefreshToken(raw: string): Buffer {
  return hash('sha256', raw, 'buffer');
}
