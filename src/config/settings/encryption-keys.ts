import { hash } from 'node:crypto';

/** AES-256 wants exactly this many key bytes. */
export const ENCRYPTION_KEY_BYTES = 32;

/** One key that encrypts or decrypts secrets at rest (see SealedBox). */
export interface EncryptionKey {
  /** A digest of the key, stored beside each sealed value so the right key is tried; not secret. */
  readonly id: string;
  readonly key: Buffer;
}

/**
 * A setting that lists encryption keys: comma-separated, each the base64 of exactly 32 bytes.
 * `label` keeps the ids of one key used for two purposes apart. Problems name an entry by its
 * position only: the values are secrets.
 */
export function parseEncryptionKeys(
  setting: string,
  value: string,
  label: string,
): { keys: EncryptionKey[]; problems: string[] } {
  const problems: string[] = [];
  const keys: EncryptionKey[] = [];
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  entries.forEach((entry, index) => {
    const key = decodeBase64(entry);
    if (key === null || key.length !== ENCRYPTION_KEY_BYTES) {
      problems.push(
        `${setting}: key ${index + 1} is not the base64 of exactly ${ENCRYPTION_KEY_BYTES} bytes`,
      );
      return;
    }
    keys.push({ id: encryptionKeyId(label, key), key });
  });
  return { keys, problems };
}

/** Standard or URL-safe base64, padded or not; null when the text is not base64 at all. */
function decodeBase64(text: string): Buffer | null {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) {
    return null;
  }
  return Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

/** 16 hex digits of SHA-256 over a label and the key: names the key without revealing it. */
export function encryptionKeyId(label: string, key: Buffer): string {
  return hash('sha256', Buffer.concat([Buffer.from(label), key]), 'hex').slice(0, 16);
}
