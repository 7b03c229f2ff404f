import { createCipheriv, createDecipheriv } from 'node:crypto';
import type { EncryptionKey } from '../../config/settings/encryption-keys.js';
import type { RandomSource } from '../random/random-source.js';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const FORMAT = 'v1';

/**
 * Secrets at rest: AES-256-GCM under a list of keys, the first seals, every one opens (the sealed
 * text names its key by id), so the list can be rolled without losing what the old key sealed.
 * What the secret belongs to (an account id, a key id) is bound in as associated data: a sealed
 * value copied to another row does not open. The text is `v1.<key id>.<iv>.<tag>.<ciphertext>`.
 */
export class SealedBox {
  constructor(
    private readonly keys: readonly EncryptionKey[],
    private readonly random: RandomSource,
  ) {}

  /** True when a key is configured, so values can be sealed and opened. */
  get isConfigured(): boolean {
    return this.keys.length > 0;
  }

  /** Throws when no key is configured: callers check isConfigured and say what that means. */
  seal(owner: string, secret: string): string {
    const key = this.keys[0];
    if (key === undefined) {
      throw new Error('No encryption key is configured');
    }
    const iv = this.random.bytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, key.key, iv);
    cipher.setAAD(Buffer.from(owner, 'utf8'));
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return [FORMAT, key.id, iv, cipher.getAuthTag(), sealed]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  /** The secret; null when no configured key opens it (unknown key, altered, another owner's). */
  open(owner: string, sealed: string): string | null {
    const [format, keyId, iv, tag, text, ...rest] = sealed.split('.');
    const key = this.keys.find((candidate) => candidate.id === keyId);
    if (format !== FORMAT || key === undefined || rest.length > 0) {
      return null;
    }
    try {
      const decipher = createDecipheriv(ALGORITHM, key.key, Buffer.from(iv ?? '', 'base64url'));
      decipher.setAAD(Buffer.from(owner, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag ?? '', 'base64url'));
      return Buffer.concat([
        decipher.update(Buffer.from(text ?? '', 'base64url')),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      return null;
    }
  }

  /** The id of the key that sealed `sealed`, as its text names it (not checked). */
  keyIdOf(sealed: string): string | undefined {
    return sealed.split('.')[1];
  }

  /** True when the value was sealed with a key other than the first (rolled out since). */
  isSealedWithOldKey(sealed: string): boolean {
    return this.keyIdOf(sealed) !== this.keys[0]?.id;
  }
}
