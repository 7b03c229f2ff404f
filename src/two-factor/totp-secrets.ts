import { Injectable, Logger } from '@nestjs/common';
import { SealedBox } from '../common/crypto/sealed-box.js';
import { RandomSource } from '../common/random/random-source.js';
import { UnavailableError } from '../common/errors/domain-errors.js';
import { AppConfig } from '../config/app-config.js';
import { MfaMessages } from './mfa.messages.js';

/**
 * Encrypts TOTP secrets at rest with AES-256-GCM under Mfa__EncryptionKeys (SealedBox): the first
 * key seals, every key opens, so the key can be rolled without turning anyone's factor off. The
 * account id is bound in as associated data: a sealed secret copied to another account's row does
 * not open. Without a key, every use is a 503, logged once.
 */
@Injectable()
export class TotpSecrets {
  private readonly logger = new Logger(TotpSecrets.name);
  private readonly box: SealedBox;
  private hasReportedMissingKey = false;

  constructor(config: AppConfig, random: RandomSource) {
    this.box = new SealedBox(config.mfa.keys, random);
  }

  /** True when a key is configured, so secrets can be sealed and opened. */
  get isConfigured(): boolean {
    return this.box.isConfigured;
  }

  seal(userId: string, secret: string): string {
    if (!this.isConfigured) {
      throw this.notConfigured();
    }
    return this.box.seal(userId, secret);
  }

  /** The base32 secret; a 503 when no configured key opens it. */
  open(userId: string, sealed: string): string {
    if (!this.isConfigured) {
      throw this.notConfigured();
    }
    const secret = this.box.open(userId, sealed);
    if (secret !== null) {
      return secret;
    }
    // Names the key id only, which is a digest; never the secret or a key.
    this.logger.error(
      `The TOTP secret of user ${userId} does not open with any key of Mfa__EncryptionKeys ` +
        `(sealed with key ${this.box.keyIdOf(sealed) ?? 'unknown'}); keep the key that sealed it in the list`,
    );
    throw new UnavailableError(MfaMessages.unavailable);
  }

  /** True when the secret was sealed with a key other than the first (rolled out since). */
  isSealedWithOldKey(sealed: string): boolean {
    return this.box.isSealedWithOldKey(sealed);
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
