import { hash } from 'node:crypto';
import type { RandomSource } from '../random/random-source.js';

/** 256 bits from the RandomSource, which in the service is the CSPRNG. */
const OPAQUE_TOKEN_BYTES = 32;

/**
 * A new bearer secret (base64url, 43 characters) and the digest under which it is stored:
 * refresh tokens and the tokens of mailed links.
 */
export function generateOpaqueToken(random: RandomSource): { raw: string; hash: string } {
  const raw = random.bytes(OPAQUE_TOKEN_BYTES).toString('base64url');
  return { raw, hash: digestOpaqueToken(raw) };
}

/**
 * Such tokens are stored and looked up only by this digest. A plain SHA-256 is enough: the input
 * has 256 bits of entropy, so there is nothing to brute-force.
 */
export function digestOpaqueToken(raw: string): string {
  return hash('sha256', raw, 'hex');
}
