import { Injectable, Logger } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import {
  ConflictError,
  InvalidArgumentError,
  NotFoundError,
  UnauthorizedError,
} from '../common/errors/domain-errors.js';
import type { AccessTokenClaims } from '../common/decorators/current-user.decorator.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { AuthEvents } from '../events/auth-events.js';
import { forRequest } from '../logging/log-fields.js';
import { MailOutbox } from '../mail/mail-outbox.js';
import type { MessageResponseDto } from '../tokens/dto/message-response.dto.js';
import { TokensService } from '../tokens/tokens.service.js';
import { normalizeEmail } from '../common/identity/email.js';
import { UsersMessages } from '../users/users.messages.js';
import { UsersService } from '../users/users.service.js';
import { AuthMessages } from '../auth/auth.messages.js';
import type { ChangeEmailDto } from './dto/change-email.dto.js';
import type { ChangePasswordDto } from '../passwords/dto/change-password.dto.js';
import type { DeleteAccountDto } from './dto/delete-account.dto.js';
import { MailedTokens } from '../account-tokens/mailed-tokens.js';
import { PasswordConfirmation } from '../passwords/password-confirmation.js';
import { PasswordHasher } from '../passwords/password-hasher.js';

/**
 * What the holder of an access token may do to the account once the password is given again:
 * change the password, ask to change the address, delete the account.
 */
@Injectable()
export class AccountService {
  private readonly logger = new Logger(AccountService.name);

  constructor(
    private readonly usersService: UsersService,
    private readonly tokensService: TokensService,
    private readonly confirmation: PasswordConfirmation,
    private readonly passwordHasher: PasswordHasher,
    private readonly mailedTokens: MailedTokens,
    private readonly mail: MailOutbox,
    private readonly unitOfWork: UnitOfWork,
    private readonly events: AuthEvents,
  ) {}

  /**
   * A new password, hashed at today's cost. Every other session ends in the same transaction (the
   * caller's, named by its access token, stays), and so do pending reset links.
   */
  async changePassword(
    claims: AccessTokenClaims,
    request: ChangePasswordDto,
    origin: RequestOrigin,
  ): Promise<MessageResponseDto> {
    // An access token issued before tokens named their session (no `sid`) keeps none.
    const currentSessionId = claims.sid ?? null;
    const user = await this.confirmation.confirm(
      claims.sub,
      request.currentPassword,
      'password_change',
      origin,
    );
    if (sameText(request.newPassword, request.currentPassword)) {
      throw new InvalidArgumentError(AuthMessages.samePassword);
    }
    const passwordHash = await this.passwordHasher.hash(request.newPassword);
    await this.unitOfWork.transaction(async (m) => {
      if (!(await this.usersService.setPasswordHash(user.id, passwordHash, m, user.passwordHash))) {
        // Another change won meanwhile: the password given is no longer the account's.
        throw new UnauthorizedError(AuthMessages.invalidCredentials);
      }
      await this.mailedTokens.revokeOf(m, user.id, ['password_reset']);
      await this.mail.cancelOpen(m, user.id, ['password_reset']);
      const revoked = await this.tokensService.revokeAllWithin(m, user.id, origin, {
        reason: AuthMessages.passwordChangedReason,
        keepFamilyId: currentSessionId,
      });
      await this.events.record(
        m,
        {
          type: 'password_changed',
          userId: user.id,
          keptFamilyId: currentSessionId,
          endedSessionIds: revoked.sessionIds,
        },
        origin,
      );
    });
    this.logger.log(`User ${user.id} changed the password`, forRequest(origin.requestId));
    return { message: AuthMessages.passwordChanged };
  }

  /**
   * Mails a link to the new address; the address changes only when it is followed (see
   * EmailVerificationService.verify). The password comes first, so that a token alone cannot ask
   * which addresses have accounts.
   */
  async requestEmailChange(
    userId: string,
    request: ChangeEmailDto,
    origin: RequestOrigin,
  ): Promise<MessageResponseDto> {
    this.mail.assertEnabled();
    const newEmail = normalizeEmail(request.newEmail);
    const user = await this.confirmation.confirm(userId, request.password, 'email_change', origin);
    if (newEmail === user.email) {
      throw new InvalidArgumentError(AuthMessages.sameEmail);
    }
    // Checked again, by the unique index, when the link is followed.
    if ((await this.usersService.findByEmail(newEmail)) !== null) {
      throw new ConflictError(UsersMessages.emailTaken);
    }
    const sent = await this.unitOfWork.transaction(async (m) => {
      const queued = await this.mailedTokens.send(m, user, 'email_change', newEmail, { newEmail });
      if (queued) {
        await this.events.record(m, { type: 'email_change_requested', userId: user.id }, origin);
      }
      return queued;
    });
    if (sent) {
      this.mail.wake();
    }
    return { message: AuthMessages.emailChangeRequested };
  }

  /** Deletes the account and, through its foreign keys, its tokens and mails. */
  async deleteAccount(
    userId: string,
    request: DeleteAccountDto,
    origin: RequestOrigin,
  ): Promise<MessageResponseDto> {
    const user = await this.confirmation.confirm(
      userId,
      request.password,
      'account_deletion',
      origin,
    );
    await this.unitOfWork.transaction(async (m) => {
      if (!(await this.usersService.delete(user.id, m))) {
        throw new NotFoundError(UsersMessages.notFound);
      }
      await this.events.record(m, { type: 'account_deleted', userId: user.id }, origin);
    });
    this.logger.log(`User ${user.id} deleted the account`, forRequest(origin.requestId));
    return { message: AuthMessages.accountDeleted };
  }
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}
