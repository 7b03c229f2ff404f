import { hash, timingSafeEqual } from 'node:crypto';
import type { RandomSource } from '../common/random/random-source.js';

/**
 * otplib is loaded on first use: most deployments never turn the second factor on, and every
 * start-up (a refused one included) would otherwise pay for loading it.
 */
let otplib: Promise<typeof import('otplib')> | undefined;

/** RFC 6238's defaults, which every authenticator app uses: 30-second steps, six digits, SHA-1. */
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** A code is accepted in its own step and one step either side (clock drift, typing time). */
export const TOTP_WINDOW_STEPS = 1;
/** 160 bits, RFC 4226's recommended secret length; 32 base32 characters. */
const SECRET_BYTES = 20;
export const RECOVERY_CODE_COUNT = 10;
/** Ten characters of a 32-letter alphabet: 50 bits each, shown as `xxxxx-xxxxx`. */
const RECOVERY_CODE_LENGTH = 10;
/** Crockford's base32 letters: no i, l, o or u, so nothing reads as another character. */
const RECOVERY_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** A new TOTP secret, base32 (RFC 4648, unpadded) as authenticator apps take it. */
export function generateTotpSecret(random: RandomSource): string {
  return base32(random.bytes(SECRET_BYTES));
}

/** The RFC 6238 time step that holds `at`. */
export function timeStepAt(at: Date): number {
  return Math.floor(at.getTime() / 1000 / TOTP_PERIOD_SECONDS);
}

/** What a submitted code looks like: a TOTP, a recovery code, or neither. */
export type SubmittedCode =
  | { readonly kind: 'totp'; readonly digits: string }
  | { readonly kind: 'recovery'; readonly digest: string }
  | { readonly kind: 'malformed' };

/** Spaces and hyphens are ignored, and case: people copy codes with them. */
export function classifyCode(code: string): SubmittedCode {
  const normalized = code.replace(/[\s-]/g, '').toLowerCase();
  if (new RegExp(`^\\d{${TOTP_DIGITS}}$`).test(normalized)) {
    return { kind: 'totp', digits: normalized };
  }
  if (normalized.length === RECOVERY_CODE_LENGTH && /^[0-9a-z]+$/.test(normalized)) {
    return { kind: 'recovery', digest: digestRecoveryCode(normalized) };
  }
  return { kind: 'malformed' };
}

/**
 * The steps around `at` (one either side) whose code is `digits`, oldest first; usually none or
 * one. Every candidate is computed and compared in constant time, whatever matched.
 */
export async function matchingSteps(secret: string, digits: string, at: Date): Promise<number[]> {
  const current = timeStepAt(at);
  const given = Buffer.from(digits);
  const matches: number[] = [];
  for (let step = current - TOTP_WINDOW_STEPS; step <= current + TOTP_WINDOW_STEPS; step += 1) {
    const expected = Buffer.from(await totpAt(secret, step));
    if (expected.length === given.length && timingSafeEqual(expected, given)) {
      matches.push(step);
    }
  }
  return matches;
}

/** The code of `step`: what an authenticator app shows during it. */
export async function totpAt(secret: string, step: number): Promise<string> {
  const { generateSync } = await (otplib ??= import('otplib'));
  return generateSync({
    secret,
    epoch: step * TOTP_PERIOD_SECONDS,
    period: TOTP_PERIOD_SECONDS,
    digits: TOTP_DIGITS,
  });
}

/** New recovery codes as shown once (`xxxxx-xxxxx`) and the digests stored in their place. */
export function generateRecoveryCodes(random: RandomSource): {
  codes: string[];
  digests: string[];
} {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    // 256 is a multiple of 32, so the low five bits of each byte pick a letter uniformly.
    const letters = [...random.bytes(RECOVERY_CODE_LENGTH)].map((b) => RECOVERY_ALPHABET[b & 31]);
    const half = RECOVERY_CODE_LENGTH / 2;
    return `${letters.slice(0, half).join('')}-${letters.slice(half).join('')}`;
  });
  const digests = codes.map((code) => digestRecoveryCode(code.replace('-', '')));
  return { codes, digests };
}

/** A plain SHA-256: a code has 50 random bits and guesses are bounded by the lockout. */
function digestRecoveryCode(normalized: string): string {
  return hash('sha256', normalized, 'hex');
}

function base32(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let text = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      text += BASE32_ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) {
    text += BASE32_ALPHABET[(value << (5 - bits)) & 31];
  }
  return text;
}
