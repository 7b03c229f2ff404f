import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ConflictError } from '../common/errors/domain-errors.js';
import { RandomSource } from '../common/random/random-source.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/app-config.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { AuthEvents } from '../events/auth-events.js';
import { TotpFactor } from './entities/totp-factor.entity.js';
import { MfaMessages } from './mfa.messages.js';
import type { Precondition } from '../database/guarded-write.js';
import { TotpFactorRepository } from './totp-factor.repository.js';
import { TotpSecrets } from './totp-secrets.js';
import {
  classifyCode,
  generateRecoveryCodes,
  generateTotpSecret,
  matchingSteps,
  TOTP_DIGITS,
  TOTP_PERIOD_SECONDS,
} from './totp-codes.js';

/** A new pending factor, as enrolment answers it: the only time the secret leaves the service. */
export interface PendingEnrolment {
  readonly secret: string;
  readonly otpauthUri: string;
}

/** What accepted a code: a TOTP of the authenticator app, or a recovery code (now spent). */
export type RedeemedCode = 'totp' | 'recovery';

/**
 * An account's TOTP factor and recovery codes: enrolment, confirmation, the check of a code
 * (each TOTP step and each recovery code once), and removal. Says nothing about passwords,
 * lockouts or sessions: the auth module's services decide those.
 */
@Injectable()
export class TotpFactors {
  private readonly issuer: string;

  constructor(
    private readonly repository: TotpFactorRepository,
    private readonly secrets: TotpSecrets,
    private readonly clock: Clock,
    private readonly random: RandomSource,
    private readonly events: AuthEvents,
    config: AppConfig,
  ) {
    this.issuer = config.mfa.issuer;
  }

  /**
   * "The account has no confirmed factor", for a login's statement to require before it writes:
   * a login that needs no code then reads nothing about factors beforehand (decision 0034).
   */
  noConfirmedFactor(userId: string): Precondition {
    return this.repository.noConfirmedFactor(userId);
  }

  /** The account's factor once confirmed; null while none is, or only a pending one. */
  async activeFactorOf(userId: string): Promise<TotpFactor | null> {
    const factor = await this.repository.findOf(userId);
    return factor !== null && factor.confirmedAt !== null ? factor : null;
  }

  /**
   * A new secret, pending until confirmed (a pending one is replaced). 409 when a confirmed
   * factor exists: turning it off comes first, with a code, so a stolen session cannot swap it.
   */
  async startEnrolment(
    userId: string,
    accountName: string,
    origin: RequestOrigin,
  ): Promise<PendingEnrolment> {
    if ((await this.activeFactorOf(userId)) !== null) {
      throw new ConflictError(MfaMessages.alreadyEnabled);
    }
    const secret = generateTotpSecret(this.random);
    const factor = Object.assign(new TotpFactor(), {
      userId,
      sealedSecret: this.secrets.seal(userId, secret),
      createdAt: this.clock.now(),
      confirmedAt: null,
      lastUsedStep: null,
    });
    const saved = await this.repository.savePending(factor, (m) =>
      this.events.record(m, { type: 'totp_enrollment_started', userId }, origin),
    );
    if (!saved) {
      throw new ConflictError(MfaMessages.alreadyEnabled);
    }
    return { secret, otpauthUri: this.otpauthUri(secret, accountName) };
  }

  /**
   * Turns the pending factor on if `code` is its current TOTP, and stores new recovery codes, in
   * the caller's transaction. Null when the code is wrong; 409 when nothing is pending.
   */
  async confirm(
    m: EntityManager,
    factor: TotpFactor | null,
    code: string,
  ): Promise<{ recoveryCodes: string[] } | null> {
    if (factor === null || factor.confirmedAt !== null) {
      throw new ConflictError(MfaMessages.notPending);
    }
    const submitted = classifyCode(code);
    if (submitted.kind !== 'totp') {
      return null;
    }
    const now = this.clock.now();
    const secret = this.secrets.open(factor.userId, factor.sealedSecret);
    const step = (await matchingSteps(secret, submitted.digits, now)).at(-1);
    if (step === undefined) {
      return null;
    }
    if (!(await this.repository.confirm(m, factor.userId, factor.sealedSecret, now, step))) {
      // Confirmed, replaced or removed meanwhile by another request.
      throw new ConflictError(MfaMessages.notPending);
    }
    return { recoveryCodes: await this.replaceRecoveryCodesWithin(m, factor.userId) };
  }

  /** The accounts with a confirmed factor, by user id after `after`, at most `limit`. */
  confirmedAfter(after: string, limit: number): Promise<string[]> {
    return this.repository.confirmedAfter(after, limit);
  }

  /** The pending or confirmed factor, for confirmation. */
  factorOf(userId: string): Promise<TotpFactor | null> {
    return this.repository.findOf(userId);
  }

  /**
   * Accepts `code` for a confirmed factor: a TOTP of its step or one either side, if no code of
   * that step or a later one was accepted before; or an unspent recovery code, which is spent.
   * Null for anything else, a replay included. A spent recovery code's `totp_recovery_code_used`
   * event is recorded in the transaction that spends it.
   */
  async redeem(
    factor: TotpFactor,
    code: string,
    origin: RequestOrigin,
  ): Promise<RedeemedCode | null> {
    const submitted = classifyCode(code);
    switch (submitted.kind) {
      case 'malformed':
        return null;
      case 'recovery':
        return (await this.repository.spendRecoveryCode(factor.userId, submitted.digest, (m) =>
          this.events.record(m, { type: 'totp_recovery_code_used', userId: factor.userId }, origin),
        ))
          ? 'recovery'
          : null;
      case 'totp': {
        const secret = this.secrets.open(factor.userId, factor.sealedSecret);
        const last = factor.lastUsedStep ?? Number.NEGATIVE_INFINITY;
        const steps = await matchingSteps(secret, submitted.digits, this.clock.now());
        const step = steps.find((candidate) => candidate > last);
        if (step === undefined || !(await this.repository.useStep(factor.userId, step))) {
          return null;
        }
        if (this.secrets.isSealedWithOldKey(factor.sealedSecret)) {
          // A rolled key: re-encrypt under the current one, so the old key can leave the list.
          const resealed = this.secrets.seal(factor.userId, secret);
          await this.repository.reseal(factor.userId, factor.sealedSecret, resealed);
        }
        return 'totp';
      }
    }
  }

  /** Ten new recovery codes in place of the old ones, in the caller's transaction. */
  async replaceRecoveryCodesWithin(m: EntityManager, userId: string): Promise<string[]> {
    const { codes, digests } = generateRecoveryCodes(this.random);
    await this.repository.replaceRecoveryCodes(m, userId, digests, this.clock.now());
    return codes;
  }

  /** Removes the factor, pending or confirmed, and its recovery codes; false when there was none. */
  remove(m: EntityManager, userId: string): Promise<boolean> {
    return this.repository.remove(m, userId);
  }

  private otpauthUri(secret: string, accountName: string): string {
    // Key URI Format (Google Authenticator): the label is `issuer:account`, the issuer repeated
    // as a parameter; the defaults (SHA1, 6 digits, 30 s) are spelled out for stricter apps.
    const label = `${encodeURIComponent(this.issuer)}:${encodeURIComponent(accountName)}`;
    const parameters = new URLSearchParams({
      secret,
      issuer: this.issuer,
      algorithm: 'SHA1',
      digits: String(TOTP_DIGITS),
      period: String(TOTP_PERIOD_SECONDS),
    });
    return `otpauth://totp/${label}?${parameters.toString().replace(/\+/g, '%20')}`;
  }
}
