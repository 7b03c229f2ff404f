import { hash } from 'node:crypto';
import type { EnvironmentVariables } from './environment-variables.js';

/** AES-256 wants exactly this many key bytes. */
export const MFA_KEY_BYTES = 32;

/** One key that encrypts or decrypts TOTP secrets at rest. */
export interface MfaKey {
  /** A digest of the key, stored beside each secret so the right key is tried first; not secret. */
  readonly id: string;
  readonly key: Buffer;
}

export interface MfaConfig {
  /** The name authenticator apps show (the otpauth URI's `issuer`). */
  readonly issuer: string;
  /** The first encrypts; every one decrypts. Empty: the second factor is not configured. */
  readonly keys: readonly MfaKey[];
}

/** Mfa__EncryptionKeys: a comma-separated list, each entry the base64 of exactly 32 bytes. */
export function checkMfa(env: EnvironmentVariables): { mfa?: MfaConfig; problems: string[] } {
  const problems: string[] = [];
  const keys: MfaKey[] = [];
  const entries = env.Mfa__EncryptionKeys.split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  entries.forEach((entry, index) => {
    const key = decodeBase64(entry);
    if (key === null || key.length !== MFA_KEY_BYTES) {
      // The value is a secret: the problem names the entry by position only.
      problems.push(
        `Mfa__EncryptionKeys: key ${index + 1} is not the base64 of exactly ${MFA_KEY_BYTES} bytes`,
      );
      return;
    }
    keys.push({ id: mfaKeyId(key), key });
  });
  if (problems.length > 0) {
    return { problems };
  }
  return { mfa: { issuer: env.Mfa__Issuer.trim(), keys }, problems };
}

/** Standard or URL-safe base64, padded or not; null when the text is not base64 at all. */
function decodeBase64(text: string): Buffer | null {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) {
    return null;
  }
  return Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

/** 16 hex digits of SHA-256 over a label and the key: names the key without revealing it. */
export function mfaKeyId(key: Buffer): string {
  return hash('sha256', Buffer.concat([Buffer.from('keygate-totp-key:'), key]), 'hex').slice(0, 16);
}
