import { Injectable, Logger } from '@nestjs/common';
import { createCipheriv, createDecipheriv } from 'node:crypto';
import { RandomSource } from '../common/random/random-source.js';
import { UnavailableError } from '../common/errors/domain-errors.js';
import { AppConfig } from '../config/app-config.js';
import type { MfaKey } from '../config/mfa-settings.js';
import { MfaMessages } from './mfa.messages.js';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const FORMAT = 'v1';

/**
 * Encrypts TOTP secrets at rest with AES-256-GCM under Mfa__EncryptionKeys: the first key seals,
 * every key opens (the sealed text names its key), so the key can be rolled without turning anyone's
 * factor off. The account id is bound in as associated data: a sealed secret copied to another
 * account's row does not open. Without a key, every use is a 503, logged once.
 */
@Injectable()
export class TotpSecrets {
  private readonly logger = new Logger(TotpSecrets.name);
  private readonly keys: readonly MfaKey[];
  private hasReportedMissingKey = false;

  constructor(
    config: AppConfig,
    private readonly random: RandomSource,
  ) {
    this.keys = config.mfa.keys;
  }

  /** True when a key is configured, so secrets can be sealed and opened. */
  get isConfigured(): boolean {
    return this.keys.length > 0;
  }

  seal(userId: string, secret: string): string {
    const key = this.keys[0];
    if (key === undefined) {
      throw this.notConfigured();
    }
    const iv = this.random.bytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, key.key, iv);
    cipher.setAAD(Buffer.from(userId, 'utf8'));
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return [FORMAT, key.id, iv, cipher.getAuthTag(), sealed]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  /** The base32 secret; a 503 when no configured key opens it. */
  open(userId: string, sealed: string): string {
    if (!this.isConfigured) {
      throw this.notConfigured();
    }
    const [format, keyId, iv, tag, text, ...rest] = sealed.split('.');
    const key = this.keys.find((candidate) => candidate.id === keyId);
    if (format === FORMAT && key !== undefined && rest.length === 0) {
      try {
        const decipher = createDecipheriv(ALGORITHM, key.key, Buffer.from(iv ?? '', 'base64url'));
        decipher.setAAD(Buffer.from(userId, 'utf8'));
        decipher.setAuthTag(Buffer.from(tag ?? '', 'base64url'));
        return Buffer.concat([
          decipher.update(Buffer.from(text ?? '', 'base64url')),
          decipher.final(),
        ]).toString('utf8');
      } catch {
        // Falls through: altered, or sealed for another account.
      }
    }
    // Names the key id only, which is a digest; never the secret or a key.
    this.logger.error(
      `The TOTP secret of user ${userId} does not open with any key of Mfa__EncryptionKeys ` +
        `(sealed with key ${keyId ?? 'unknown'}); keep the key that sealed it in the list`,
    );
    throw new UnavailableError(MfaMessages.unavailable);
  }

  /** True when the secret was sealed with a key other than the first (rolled out since). */
  isSealedWithOldKey(sealed: string): boolean {
    return sealed.split('.')[1] !== this.keys[0]?.id;
  }

  private notConfigured(): UnavailableError {
    if (!this.hasReportedMissingKey) {
      this.hasReportedMissingKey = true;
      this.logger.error(
        'A second-factor request needs Mfa__EncryptionKeys, which is not configured: the ' +
          'second-factor routes, and logins of accounts with a factor, answer 503',
      );
    }
    return new UnavailableError(MfaMessages.unavailable);
  }
}
