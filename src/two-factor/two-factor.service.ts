import { Injectable, Logger } from '@nestjs/common';
import { ConflictError, NotFoundError, UnauthorizedError } from '../common/errors/domain-errors.js';
import type { AccessTokenClaims } from '../common/decorators/current-user.decorator.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { AuthEvent, TotpCodeAction, TotpCodeFailureReason } from '../events/auth-event.js';
import { AuthEvents } from '../events/auth-events.js';
import { forRequest } from '../logging/log-fields.js';
import { MfaMessages } from './mfa.messages.js';
import { TotpFactors } from './totp-factors.service.js';
import type { MessageResponseDto } from '../tokens/dto/message-response.dto.js';
import { TokensService } from '../tokens/tokens.service.js';
import type { User } from '../users/entities/user.entity.js';
import { UsersMessages } from '../users/users.messages.js';
import { UsersService } from '../users/users.service.js';
import { AccountLock } from '../passwords/account-lock.js';
import type { DisableTotpDto } from './dto/disable-totp.dto.js';
import type { EnrollTotpDto } from './dto/enroll-totp.dto.js';
import type { RecoveryCodesResponseDto } from './dto/recovery-codes-response.dto.js';
import type { TotpCodeDto } from './dto/totp-code.dto.js';
import type { TotpEnrolmentResponseDto } from './dto/totp-enrolment-response.dto.js';
import { FailedLogins } from '../passwords/failed-logins.js';
import { PasswordConfirmation } from '../passwords/password-confirmation.js';

/**
 * The TOTP second factor's routes (beyond the interface): enrolment with the password, its
 * confirmation with a first code, new recovery codes with a code, and turning it off with the
 * password and a code. A wrong code at the last two counts toward the lockout as a wrong
 * password does, so a stolen access token buys no more guesses than a login would.
 */
@Injectable()
export class TwoFactorService {
  private readonly logger = new Logger(TwoFactorService.name);

  constructor(
    private readonly usersService: UsersService,
    private readonly tokensService: TokensService,
    private readonly totpFactors: TotpFactors,
    private readonly confirmation: PasswordConfirmation,
    private readonly accountLock: AccountLock,
    private readonly failedLogins: FailedLogins,
    private readonly unitOfWork: UnitOfWork,
    private readonly events: AuthEvents,
  ) {}

  /** A new secret, pending until confirmed; a pending one is replaced. */
  async enroll(
    userId: string,
    request: EnrollTotpDto,
    origin: RequestOrigin,
  ): Promise<TotpEnrolmentResponseDto> {
    const user = await this.confirmation.confirm(
      userId,
      request.password,
      'totp_enrollment',
      origin,
    );
    const { secret, otpauthUri } = await this.totpFactors.startEnrolment(
      user.id,
      user.email,
      origin,
    );
    // Loaded on first use, like otplib: a start-up pays nothing for a feature seldom turned on.
    const { default: QRCode } = await import('qrcode');
    const qrCode = await QRCode.toDataURL(otpauthUri, { errorCorrectionLevel: 'M', margin: 2 });
    this.logger.log(`User ${user.id} started a TOTP enrolment`, forRequest(origin.requestId));
    return { secret, otpauthUri, qrCode };
  }

  /**
   * Turns the pending factor on with its first code and answers ten recovery codes. Every other
   * session ends in the same transaction (they were opened with the password alone); the
   * caller's, named by its access token's `sid`, stays. A wrong code here is not counted toward
   * the lockout: the factor does not protect anything yet, and a fumbled set-up must not lock
   * its owner out.
   */
  async confirm(
    claims: AccessTokenClaims,
    request: TotpCodeDto,
    origin: RequestOrigin,
  ): Promise<RecoveryCodesResponseDto> {
    const currentSessionId = claims.sid ?? null;
    const user = await this.find(claims.sub);
    const refusal = this.failedLogins.refusalFor(user);
    if (refusal !== null) {
      throw await this.refuse(
        user.id,
        'totp_confirmation',
        refusal.reason,
        refusal.message,
        origin,
      );
    }
    const factor = await this.totpFactors.factorOf(user.id);
    const result = await this.unitOfWork.transaction(async (m) => {
      const confirmed = await this.totpFactors.confirm(m, factor, request.code);
      if (confirmed === null) {
        return null;
      }
      const revoked = await this.tokensService.revokeAllWithin(m, user.id, origin, {
        reason: MfaMessages.enabledReason,
        keepFamilyId: currentSessionId,
      });
      await this.events.record(
        m,
        {
          type: 'totp_enabled',
          userId: user.id,
          keptFamilyId: currentSessionId,
          endedSessionIds: revoked.sessionIds,
        },
        origin,
      );
      return { recoveryCodes: confirmed.recoveryCodes, revoked };
    });
    if (result === null) {
      throw await this.refuse(
        user.id,
        'totp_confirmation',
        'bad_code',
        MfaMessages.invalidCode,
        origin,
      );
    }
    this.logger.log(`User ${user.id} turned TOTP on`, forRequest(origin.requestId));
    return { recoveryCodes: result.recoveryCodes };
  }

  /** Ten new recovery codes in place of the old ones, for a code. */
  async replaceRecoveryCodes(
    userId: string,
    request: TotpCodeDto,
    origin: RequestOrigin,
  ): Promise<RecoveryCodesResponseDto> {
    const user = await this.confirmCode(userId, request.code, 'recovery_codes', origin);
    const recoveryCodes = await this.unitOfWork.transaction(async (m) => {
      const codes = await this.totpFactors.replaceRecoveryCodesWithin(m, user.id);
      await this.events.record(
        m,
        { type: 'totp_recovery_codes_replaced', userId: user.id },
        origin,
      );
      return codes;
    });
    return { recoveryCodes };
  }

  /** Turns the factor off, for the password and a code; its recovery codes go with it. */
  async disable(
    userId: string,
    request: DisableTotpDto,
    origin: RequestOrigin,
  ): Promise<MessageResponseDto> {
    await this.confirmation.confirm(userId, request.password, 'totp_disable', origin);
    const user = await this.confirmCode(userId, request.code, 'totp_disable', origin);
    await this.unitOfWork.transaction(async (m) => {
      await this.totpFactors.remove(m, user.id);
      await this.events.record(m, { type: 'totp_disabled', userId: user.id }, origin);
    });
    this.logger.log(`User ${user.id} turned TOTP off`, forRequest(origin.requestId));
    return { message: MfaMessages.disabled };
  }

  /**
   * Checks a code of the account's confirmed factor as a login checks it: deactivated and locked
   * out first, then the code, whose failure counts toward the lockout. Attempts on one account
   * take turns with its logins. 409 when the account has no factor on.
   */
  private async confirmCode(
    userId: string,
    code: string,
    action: TotpCodeAction,
    origin: RequestOrigin,
  ): Promise<User> {
    const first = await this.find(userId);
    return this.accountLock.run(first.email, async () => {
      let user = await this.find(userId);
      let refusal = this.failedLogins.refusalFor(user);
      if (refusal !== null) {
        throw await this.refuse(userId, action, refusal.reason, refusal.message, origin);
      }
      const factor = await this.totpFactors.activeFactorOf(user.id);
      if (factor === null) {
        throw new ConflictError(MfaMessages.notEnabled);
      }
      const redeemed = await this.totpFactors.redeem(factor, code, origin);
      if (redeemed !== null) {
        return user;
      }
      const failure: AuthEvent = { type: 'totp_code_failed', userId, action, reason: 'bad_code' };
      while (!(await this.failedLogins.record(user, origin, failure))) {
        user = await this.find(userId);
        refusal = this.failedLogins.refusalFor(user);
        if (refusal !== null) {
          throw await this.refuse(userId, action, refusal.reason, refusal.message, origin);
        }
      }
      throw new UnauthorizedError(MfaMessages.invalidCode);
    });
  }

  /** The refusal's error, once its event committed (a unit of its own: nothing else changed). */
  private async refuse(
    userId: string,
    action: TotpCodeAction,
    reason: TotpCodeFailureReason,
    message: string,
    origin: RequestOrigin,
  ): Promise<UnauthorizedError> {
    await this.events.recordAlone({ type: 'totp_code_failed', userId, action, reason }, origin);
    return new UnauthorizedError(message);
  }

  private async find(userId: string): Promise<User> {
    const user = await this.usersService.findById(userId);
    if (user === null) {
      throw new NotFoundError(UsersMessages.notFound);
    }
    return user;
  }
}
