import { Injectable, Logger } from '@nestjs/common';
import {
  ConflictError,
  InvalidArgumentError,
  NotFoundError,
} from '../common/errors/domain-errors.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { AuthEvents } from '../events/auth-events.js';
import { forRequest } from '../logging/log-fields.js';
import { MailOutbox } from '../mail/mail-outbox.js';
import type { MessageResponseDto } from '../tokens/dto/message-response.dto.js';
import { normalizeEmail } from '../common/identity/email.js';
import { UsersMessages } from '../users/users.messages.js';
import { UsersService } from '../users/users.service.js';
import { AccountMessages } from './account.messages.js';
import type { ChangeEmailDto } from './dto/change-email.dto.js';
import type { DeleteAccountDto } from './dto/delete-account.dto.js';
import { MailedTokens } from '../account-tokens/mailed-tokens.js';
import { PasswordConfirmation } from '../passwords/password-confirmation.js';

/**
 * What the holder of an access token may do to the account once the password is given again:
 * ask to change the address, delete the account.
 */
@Injectable()
export class AccountService {
  private readonly logger = new Logger(AccountService.name);

  constructor(
    private readonly usersService: UsersService,
    private readonly confirmation: PasswordConfirmation,
    private readonly mailedTokens: MailedTokens,
    private readonly mail: MailOutbox,
    private readonly unitOfWork: UnitOfWork,
    private readonly events: AuthEvents,
  ) {}

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
      throw new InvalidArgumentError(AccountMessages.sameEmail);
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
    return { message: AccountMessages.emailChangeRequested };
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
    return { message: AccountMessages.accountDeleted };
  }
}
