import { Injectable, Logger } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { MailedTokens } from '../account-tokens/mailed-tokens.js';
import type { AccessTokenClaims } from '../common/decorators/current-user.decorator.js';
import { InvalidArgumentError, UnauthorizedError } from '../common/errors/domain-errors.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { AuthEvents } from '../events/auth-events.js';
import { forRequest } from '../logging/log-fields.js';
import { MailOutbox } from '../mail/mail-outbox.js';
import type { MessageResponseDto } from '../tokens/dto/message-response.dto.js';
import { TokensService } from '../tokens/tokens.service.js';
import { UsersService } from '../users/users.service.js';
import type { ChangePasswordDto } from './dto/change-password.dto.js';
import { PasswordConfirmation } from './password-confirmation.js';
import { PasswordHasher } from './password-hasher.js';
import { PasswordsMessages } from './passwords.messages.js';

/** The holder of an access token changes the password, giving the current one again. */
@Injectable()
export class PasswordChangeService {
  private readonly logger = new Logger(PasswordChangeService.name);

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
      throw new InvalidArgumentError(PasswordsMessages.samePassword);
    }
    const passwordHash = await this.passwordHasher.hash(request.newPassword);
    await this.unitOfWork.transaction(async (m) => {
      if (!(await this.usersService.setPasswordHash(user.id, passwordHash, m, user.passwordHash))) {
        // Another change won meanwhile: the password given is no longer the account's.
        throw new UnauthorizedError(PasswordsMessages.invalidCredentials);
      }
      await this.mailedTokens.revokeOf(m, user.id, ['password_reset']);
      await this.mail.cancelOpen(m, user.id, ['password_reset']);
      const revoked = await this.tokensService.revokeAllWithin(m, user.id, origin, {
        reason: PasswordsMessages.passwordChangedReason,
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
    return { message: PasswordsMessages.passwordChanged };
  }
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}
