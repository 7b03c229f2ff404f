import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { Clock } from '../common/time/clock.js';
import type { AuthEvent } from '../events/auth-event.js';
import { AuthEvents } from '../events/auth-events.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { forRequest } from '../logging/log-fields.js';
import type { User } from '../users/entities/user.entity.js';
import { UsersMessages } from '../users/users.messages.js';
import { UsersService } from '../users/users.service.js';
import { PasswordsMessages } from './passwords.messages.js';
import { afterFailedLogin, isLockedOut, remainingLockoutMinutes } from './lockout.js';

/** Why an account may not use its password now, and what it is told. */
export interface PasswordRefusal {
  readonly reason: 'deactivated' | 'locked';
  readonly message: string;
}

/**
 * The lockout rules of SPEC §3.1, for every route that checks a password: login, and the account
 * routes that ask for it again (a stolen access token must not buy unlimited guesses).
 */
@Injectable()
export class FailedLogins {
  // Lockout warnings keep the context they always had, which operators' alerts may filter on.
  private readonly logger = new Logger('AuthService');

  constructor(
    private readonly usersService: UsersService,
    private readonly clock: Clock,
    private readonly events: AuthEvents,
    private readonly unitOfWork: UnitOfWork,
  ) {}

  /** Spec §4.2 order: deactivated, then locked out; null when the password may be checked. */
  refusalFor(user: User): PasswordRefusal | null {
    if (!user.isActive) {
      return { reason: 'deactivated', message: UsersMessages.deactivated };
    }
    const now = this.clock.now();
    if (isLockedOut(user, now)) {
      const minutes = remainingLockoutMinutes(user.lockoutEnd, now);
      return { reason: 'locked', message: PasswordsMessages.lockedOut(minutes) };
    }
    return null;
  }

  /**
   * Counts a wrong password, and starts a lockout at the fifth. Written only if the lockout state
   * is still the one read; false when the account changed meanwhile (the caller reads it again).
   * `failure`, the caller's event for the refused attempt, is recorded with the count, in its
   * transaction (after `lockout_started` when this attempt starts a lockout). `alongside` writes
   * more in that transaction once the count is in (a mailed code's own count of wrong tries); if
   * it throws, nothing is written and the error is the caller's.
   */
  async record(
    user: User,
    origin: RequestOrigin,
    failure: AuthEvent,
    alongside?: (manager: EntityManager) => Promise<void>,
  ): Promise<boolean> {
    const next = afterFailedLogin(user, this.clock.now());
    const lockout = next.lockedOut && next.lockoutEnd !== null ? next.lockoutEnd : null;
    const written = await this.unitOfWork.transaction(async (m) => {
      const replaced = await this.usersService.replaceLoginState(
        user.id,
        user,
        { failedLoginAttempts: next.failedLoginAttempts, lockoutEnd: next.lockoutEnd },
        m,
      );
      if (!replaced) {
        return false;
      }
      await alongside?.(m);
      if (lockout !== null) {
        const lockedUntil = lockout;
        await this.events.record(
          m,
          {
            type: 'lockout_started',
            userId: user.id,
            failedAttempts: next.failedLoginAttempts,
            lockedUntil,
          },
          origin,
        );
      }
      await this.events.record(m, failure, origin);
      return true;
    });
    if (written && lockout !== null) {
      this.logger.warn(
        `User ${user.id} locked out after ${next.failedLoginAttempts} failed login attempts`,
        forRequest(origin.requestId),
      );
    }
    return written;
  }
}
