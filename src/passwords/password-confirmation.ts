import { Injectable } from '@nestjs/common';
import { NotFoundError, UnauthorizedError } from '../common/errors/domain-errors.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import type {
  AuthEvent,
  PasswordConfirmationAction,
  PasswordConfirmationFailureReason,
} from '../events/auth-event.js';
import { AuthEvents } from '../events/auth-events.js';
import type { User } from '../users/entities/user.entity.js';
import { UsersMessages } from '../users/users.messages.js';
import { UsersService } from '../users/users.service.js';
import { AccountLock } from './account-lock.js';
import { PasswordsMessages } from './passwords.messages.js';
import { FailedLogins } from './failed-logins.js';
import { PasswordHasher } from './password-hasher.js';

/**
 * The password asked again by the routes that change or delete an account, checked like a login's
 * (SPEC §3.1): an unknown account is 404 `Usuario no encontrado.` (as at `me`), a deactivated one
 * 401 `Cuenta desactivada.`, a locked-out one the lockout message without checking, and a wrong
 * password 401 `Credenciales inválidas.`, counted toward the lockout. A right one resets nothing:
 * only a successful login does. Attempts on one account take turns with its logins.
 */
@Injectable()
export class PasswordConfirmation {
  constructor(
    private readonly usersService: UsersService,
    private readonly passwordHasher: PasswordHasher,
    private readonly accountLock: AccountLock,
    private readonly failedLogins: FailedLogins,
    private readonly events: AuthEvents,
  ) {}

  /** The account, read after the password was confirmed. */
  async confirm(
    userId: string,
    password: string,
    action: PasswordConfirmationAction,
    origin: RequestOrigin,
  ): Promise<User> {
    const first = await this.find(userId);
    // Refusals decided where nothing is written; a wrong password's is recorded with its count.
    const refusals = this.events.pending();
    const refuse = (reason: PasswordConfirmationFailureReason, message: string) => {
      refusals.record({ type: 'password_confirmation_failed', userId, action, reason }, origin);
      return new UnauthorizedError(message);
    };
    const failure: AuthEvent = {
      type: 'password_confirmation_failed',
      userId,
      action,
      reason: 'bad_password',
    };
    return refusals.settle(
      this.accountLock.run(first.email, async () => {
        const assertMayUsePassword = (account: User): void => {
          const refusal = this.failedLogins.refusalFor(account);
          if (refusal !== null) {
            throw refuse(refusal.reason, refusal.message);
          }
        };
        const user = await this.find(userId);
        assertMayUsePassword(user);
        if (await this.passwordHasher.verify(password, user.passwordHash)) {
          return user;
        }
        await this.usersService.retryOnLoginStateChange(
          user,
          async (current) =>
            (await this.failedLogins.record(current, origin, failure)) ? current : null,
          {
            whenGone: () => new NotFoundError(UsersMessages.notFound),
            onReread: assertMayUsePassword,
          },
        );
        throw new UnauthorizedError(PasswordsMessages.invalidCredentials);
      }),
    );
  }

  private async find(userId: string): Promise<User> {
    const user = await this.usersService.findById(userId);
    if (user === null) {
      throw new NotFoundError(UsersMessages.notFound);
    }
    return user;
  }
}
