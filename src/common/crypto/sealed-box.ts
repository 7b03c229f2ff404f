import { createCipheriv, createDecipheriv } from 'node:crypto';
import type { RandomSource } from '../random/random-source.js';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const FORMAT = 'v1';

/** One AES-256 key: its id (a digest or a `kid`, never the key) is written beside what it seals. */
export interface SealingKey {
  readonly id: string;
  readonly key: Buffer;
}

/**
 * Secrets that must be read in clear later, at rest: AES-256-GCM under the first of `keys`, any
 * of which opens (the sealed text `v1.<key id>.<iv>.<tag>.<text>` names its key, so keys can be
 * rolled). `bound`, when given, is authenticated associated data: a sealed value copied to
 * another row (another account, another subscription) does not open there. The one place the
 * project encrypts: TOTP secrets, outbox tokens and webhook secrets all go through it.
 */
export class SealedBox {
  constructor(
    private readonly keys: readonly SealingKey[],
    private readonly random: RandomSource,
  ) {}

  get isConfigured(): boolean {
    return this.keys.length > 0;
  }

  /** Throws when no key is configured: callers check isConfigured and answer their own way. */
  seal(plain: string, bound?: string): string {
    const key = this.keys[0];
    if (key === undefined) {
      throw new Error('No key to seal with');
    }
    const iv = this.random.bytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, key.key, iv);
    if (bound !== undefined) {
      cipher.setAAD(Buffer.from(bound, 'utf8'));
    }
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [FORMAT, key.id, iv, cipher.getAuthTag(), sealed]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  /** The plain text; null when no configured key opens it, it was altered, or bound elsewhere. */
  open(sealed: string, bound?: string): string | null {
    const [format, keyId, iv, tag, text, ...rest] = sealed.split('.');
    const key = this.keys.find((candidate) => candidate.id === keyId);
    if (format !== FORMAT || key === undefined || rest.length > 0) {
      return null;
    }
    try {
      const decipher = createDecipheriv(ALGORITHM, key.key, Buffer.from(iv ?? '', 'base64url'));
      if (bound !== undefined) {
        decipher.setAAD(Buffer.from(bound, 'utf8'));
      }
      decipher.setAuthTag(Buffer.from(tag ?? '', 'base64url'));
      return Buffer.concat([
        decipher.update(Buffer.from(text ?? '', 'base64url')),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      return null;
    }
  }

  /** The id of the key that sealed `sealed` (a digest, not secret). */
  static keyIdOf(sealed: string): string | undefined {
    return sealed.split('.')[1];
  }

  /** True when `sealed` was sealed with a key other than the first (rolled out since). */
  isSealedWithOldKey(sealed: string): boolean {
    return SealedBox.keyIdOf(sealed) !== this.keys[0]?.id;
  }
}
