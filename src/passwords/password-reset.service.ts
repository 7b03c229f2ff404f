import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { Clock } from '../common/time/clock.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { AuthEvents } from '../events/auth-events.js';
import { forRequest } from '../logging/log-fields.js';
import { MailOutbox } from '../mail/mail-outbox.js';
import type { PreparedMail } from '../mail/mail-sender.js';
import type { MessageResponseDto } from '../tokens/dto/message-response.dto.js';
import { TokensService } from '../tokens/tokens.service.js';
import { normalizeEmail } from '../common/identity/email.js';
import { UsersService } from '../users/users.service.js';
import { PasswordsMessages } from './passwords.messages.js';
import type { ForgotPasswordDto } from './dto/forgot-password.dto.js';
import type { ResetPasswordDto } from './dto/reset-password.dto.js';
import { MailedTokens } from '../account-tokens/mailed-tokens.js';
import { PasswordHasher } from './password-hasher.js';

/**
 * A forgotten password, reset through a link mailed to the account's address. Asking costs the
 * same whatever the address: the request is queued as it is, and whether an account has the
 * address is decided later by the mail sender, off the request path (see prepare).
 */
@Injectable()
export class PasswordResetService implements OnModuleInit {
  private readonly logger = new Logger(PasswordResetService.name);

  constructor(
    private readonly usersService: UsersService,
    private readonly tokensService: TokensService,
    private readonly passwordHasher: PasswordHasher,
    private readonly mailedTokens: MailedTokens,
    private readonly mail: MailOutbox,
    private readonly unitOfWork: UnitOfWork,
    private readonly clock: Clock,
    private readonly events: AuthEvents,
  ) {}

  onModuleInit(): void {
    this.mail.registerPreparer('password_reset', (m, recipient, origin) =>
      this.prepare(m, recipient, origin),
    );
  }

  /** The same answer, and the same work, for every address. */
  async forgot(request: ForgotPasswordDto, origin: RequestOrigin): Promise<MessageResponseDto> {
    this.mail.assertEnabled();
    await this.mail.request('password_reset', normalizeEmail(request.email), origin);
    return { message: PasswordsMessages.resetRequested };
  }

  /**
   * Sets the new password and ends every session, in one transaction that also uses the token up.
   * The lockout counter is left as it is (SPEC §3.1: only a successful login resets it). The link
   * reached the account's address, so that address counts as verified too.
   */
  async reset(request: ResetPasswordDto, origin: RequestOrigin): Promise<MessageResponseDto> {
    const { token, user } = await this.mailedTokens.redeemable(
      request.token,
      ['password_reset'],
      'password_reset_failed',
      origin,
    );
    const passwordHash = await this.passwordHasher.hash(request.newPassword);
    const revoked = await this.unitOfWork.transaction(async (m) => {
      if (!(await this.mailedTokens.consume(m, token))) {
        return null;
      }
      // A reset overrides whatever password the account has now, a change made meanwhile included.
      await this.usersService.setPasswordHash(user.id, passwordHash, m);
      if (user.emailVerifiedAt === null) {
        await this.usersService.markEmailVerified(user.id, token.email, this.clock.now(), m);
      }
      const { sessionIds } = await this.tokensService.revokeAllWithin(m, user.id, origin, {
        reason: PasswordsMessages.passwordResetReason,
        keepFamilyId: null,
      });
      await this.events.record(
        m,
        { type: 'password_reset', userId: user.id, endedSessionIds: sessionIds },
        origin,
      );
      return sessionIds;
    });
    if (revoked === null) {
      throw await this.mailedTokens.usedMeanwhile('password_reset_failed', origin);
    }
    this.logger.log(`User ${user.id} reset the password`, forRequest(origin.requestId));
    return { message: PasswordsMessages.passwordReset };
  }

  /**
   * The sender's half of a request: no mail for an address without an account, for a
   * deactivated account (its reset would be refused), or inside the minimum interval.
   */
  private async prepare(
    m: EntityManager,
    recipient: string,
    origin: RequestOrigin,
  ): Promise<PreparedMail | null> {
    const user = await this.usersService.findByEmail(recipient, m);
    if (user === null || !user.isActive) {
      return null;
    }
    const token = await this.mailedTokens.create(m, user, 'password_reset', user.email);
    if (token === null) {
      return null;
    }
    await this.events.record(m, { type: 'password_reset_requested', userId: user.id }, origin);
    return {
      userId: user.id,
      recipient: user.email,
      values: this.mailedTokens.valuesFor(user, 'password_reset'),
      token,
    };
  }
}
