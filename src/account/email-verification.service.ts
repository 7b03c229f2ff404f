import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ConflictError, NotFoundError, UnauthorizedError } from '../common/errors/domain-errors.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { Clock } from '../common/time/clock.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { AuthEvents } from '../events/auth-events.js';
import { forRequest } from '../logging/log-fields.js';
import { MailOutbox } from '../mail/mail-outbox.js';
import type { MessageResponseDto } from '../tokens/dto/message-response.dto.js';
import type { User } from '../users/entities/user.entity.js';
import { UsersMessages } from '../users/users.messages.js';
import { UsersService } from '../users/users.service.js';
import { AccountMessages } from './account.messages.js';
import type { VerifyEmailDto } from './dto/verify-email.dto.js';
import type { AccountToken } from '../account-tokens/entities/account-token.entity.js';
import { MailedTokens } from '../account-tokens/mailed-tokens.js';

/**
 * Proving an address: the link mailed at registration (or asked for again), and the link that
 * confirms a new address, which only then replaces the old one. Both links open the same route.
 */
@Injectable()
export class EmailVerificationService {
  private readonly logger = new Logger(EmailVerificationService.name);

  constructor(
    private readonly usersService: UsersService,
    private readonly mailedTokens: MailedTokens,
    private readonly mail: MailOutbox,
    private readonly unitOfWork: UnitOfWork,
    private readonly clock: Clock,
    private readonly events: AuthEvents,
  ) {}

  /**
   * Registration's verification mail and its event, inside its transaction; nothing when mail is
   * off. True when a mail was queued: the caller then wakes the sender once it committed.
   */
  async sendOnRegistration(
    manager: EntityManager,
    user: User,
    origin: RequestOrigin,
  ): Promise<boolean> {
    return this.mail.isEnabled && this.sendWithin(manager, user, origin);
  }

  /** Whether registration queues a verification mail (in its own transaction): mail is on. */
  get sendsOnRegistration(): boolean {
    return this.mail.isEnabled;
  }

  /** After a registration's transaction committed with a verification mail in it. */
  registrationMailQueued(): void {
    this.mail.wake();
  }

  /** Another verification link for the bearer's current address. */
  async resend(userId: string, origin: RequestOrigin): Promise<MessageResponseDto> {
    this.mail.assertEnabled();
    const user = await this.usersService.findById(userId);
    if (user === null) {
      throw new NotFoundError(UsersMessages.notFound);
    }
    if (!user.isActive) {
      throw new UnauthorizedError(UsersMessages.deactivated);
    }
    if (user.emailVerifiedAt !== null) {
      throw new ConflictError(AccountMessages.emailAlreadyVerified);
    }
    await this.remind(user, origin);
    return { message: AccountMessages.verificationRequested };
  }

  /**
   * Queues a verification mail unless one went out within Mail__MinIntervalSeconds: for resend,
   * and for a login refused because the address is unverified (it cannot reach resend).
   */
  async remind(user: User, origin: RequestOrigin): Promise<void> {
    if (!this.mail.isEnabled) {
      return;
    }
    if (await this.unitOfWork.transaction((m) => this.sendWithin(m, user, origin))) {
      this.mail.wake();
    }
  }

  /** A verification mail to the account's address, with its event; false if too soon. */
  private async sendWithin(m: EntityManager, user: User, origin: RequestOrigin): Promise<boolean> {
    if (!(await this.mailedTokens.send(m, user, 'email_verification', user.email))) {
      return false;
    }
    await this.events.record(m, { type: 'email_verification_requested', userId: user.id }, origin);
    return true;
  }

  /**
   * Uses a verification or e-mail-change token. A token is refused (one text for every case) when
   * unknown, used, expired, or no longer fitting the account: a verification token whose address
   * is not the account's any more.
   */
  async verify(request: VerifyEmailDto, origin: RequestOrigin): Promise<MessageResponseDto> {
    const { token, user } = await this.mailedTokens.redeemable(
      request.token,
      ['email_verification', 'email_change'],
      'email_verification_failed',
      origin,
    );
    const done =
      token.purpose === 'email_change'
        ? await this.changeEmail(user, token, origin)
        : await this.markVerified(user, token, origin);
    if (!done) {
      throw await this.mailedTokens.usedMeanwhile('email_verification_failed', origin);
    }
    if (token.purpose === 'email_change') {
      this.mail.wake();
      this.logger.log(`User ${user.id} changed the e-mail address`, forRequest(origin.requestId));
      return { message: AccountMessages.emailChanged };
    }
    return { message: AccountMessages.emailVerified };
  }

  private markVerified(user: User, token: AccountToken, origin: RequestOrigin): Promise<boolean> {
    return this.unitOfWork.transaction(async (m) => {
      if (!(await this.mailedTokens.consume(m, token))) {
        return false;
      }
      if (!(await this.usersService.markEmailVerified(user.id, token.email, this.clock.now(), m))) {
        return false;
      }
      await this.events.record(m, { type: 'email_verified', userId: user.id }, origin);
      return true;
    });
  }

  /**
   * The new address replaces the old one, proven by the link; a taken address is 409 and leaves
   * the token usable. Links mailed to the old address (reset, verification) die with it, and the
   * old address is told.
   */
  private changeEmail(user: User, token: AccountToken, origin: RequestOrigin): Promise<boolean> {
    return this.unitOfWork.transaction(async (m) => {
      if (!(await this.mailedTokens.consume(m, token))) {
        return false;
      }
      const change = { from: user.email, to: token.email, at: this.clock.now() };
      if (!(await this.usersService.replaceEmail(user.id, change, m))) {
        return false;
      }
      const outdated = ['password_reset', 'email_verification', 'email_change'] as const;
      await this.mailedTokens.revokeOf(m, user.id, outdated);
      await this.mail.cancelOpen(m, user.id, [...outdated]);
      await this.mail.enqueue(m, {
        kind: 'email_changed',
        userId: user.id,
        recipient: user.email,
        values: { username: user.username, newEmail: token.email },
      });
      await this.events.record(m, { type: 'email_changed', userId: user.id }, origin);
      return true;
    });
  }
}
