import type { EnvironmentVariables } from '../environment-variables.js';
import {
  encryptionKeyId,
  ENCRYPTION_KEY_BYTES,
  parseEncryptionKeys,
  type EncryptionKey,
} from './encryption-keys.js';

/** AES-256 wants exactly this many key bytes. */
export const MFA_KEY_BYTES = ENCRYPTION_KEY_BYTES;

/** One key that encrypts or decrypts TOTP secrets at rest. */
export type MfaKey = EncryptionKey;

export interface MfaConfig {
  /** The name authenticator apps show (the otpauth URI's `issuer`). */
  readonly issuer: string;
  /** The first encrypts; every one decrypts. Empty: the second factor is not configured. */
  readonly keys: readonly MfaKey[];
}

const MFA_KEY_LABEL = 'keygate-totp-key:';

/** Mfa__EncryptionKeys: a comma-separated list, each entry the base64 of exactly 32 bytes. */
export function checkMfa(env: EnvironmentVariables): { mfa?: MfaConfig; problems: string[] } {
  const { keys, problems } = parseEncryptionKeys(
    'Mfa__EncryptionKeys',
    env.Mfa__EncryptionKeys,
    MFA_KEY_LABEL,
  );
  if (problems.length > 0) {
    return { problems };
  }
  return { mfa: { issuer: env.Mfa__Issuer.trim(), keys }, problems };
}

/** 16 hex digits of SHA-256 over a label and the key: names the key without revealing it. */
export function mfaKeyId(key: Buffer): string {
  return encryptionKeyId(MFA_KEY_LABEL, key);
}
