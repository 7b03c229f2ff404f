import { Injectable, Logger } from '@nestjs/common';
import { AuditRetentionService, type AuditPurgeResult } from '../audit/audit-retention.service.js';
import { AuditTrail, type AuditEntry } from '../audit/audit-trail.service.js';
import { InvalidArgumentError, NotFoundError } from '../common/errors/domain-errors.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { AuthEvents } from '../events/auth-events.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { TotpFactors } from '../mfa/totp-factors.service.js';
import { Passkeys } from '../passkeys/passkeys.service.js';
import { TokenCleanupService } from '../tokens/token-cleanup.service.js';
import { TokensService } from '../tokens/tokens.service.js';
import { normalizeEmail } from '../common/identity/email.js';
import { emailCollisions, type EmailCollision } from '../common/identity/email-collisions.js';
import type { User } from '../users/entities/user.entity.js';
import { UsersService, type AccountSummary } from '../users/users.service.js';
import { AdminMessages } from './admin.messages.js';

export const DEFAULT_AUDIT_LIMIT = 50;
export const MAX_AUDIT_LIMIT = 1_000;

/** The account an operator named, as the answers show it. */
export interface Account {
  readonly id: string;
  readonly email: string;
}

export interface ActivationResult {
  readonly account: Account;
  /** False when the account already was in the state asked for. */
  readonly changed: boolean;
}

export interface DeactivationResult extends ActivationResult {
  readonly revokedTokenCount: number;
}

export interface UnlockResult {
  readonly account: Account;
  /** What was cleared: the failed-attempt counter and the lockout end as they were. */
  readonly failedAttempts: number;
  readonly lockedUntil: Date | null;
}

export interface SessionsResult {
  readonly account: Account;
  readonly revokedTokenCount: number;
}

export interface PasskeysRemovedResult {
  readonly account: Account;
  readonly removedCount: number;
}

export interface AuditResult {
  readonly account: Account;
  /** Newest first. */
  readonly entries: readonly AuditEntry[];
}

/**
 * What an operator may do to accounts and tokens (the admin CLI is its only caller). Accounts are
 * named by e-mail, normalised as the API does; an unknown one is a NotFoundError. Every action
 * tells an `admin_*` event once its change has committed, so it lands in the audit trail.
 */
@Injectable()
export class AdminService {
  private readonly logger = new Logger(AdminService.name);

  constructor(
    private readonly usersService: UsersService,
    private readonly tokensService: TokensService,
    private readonly tokenCleanup: TokenCleanupService,
    private readonly auditTrail: AuditTrail,
    private readonly auditRetention: AuditRetentionService,
    private readonly events: AuthEvents,
    private readonly totpFactors: TotpFactors,
    private readonly unitOfWork: UnitOfWork,
    private readonly passkeys: Passkeys,
  ) {}

  /**
   * Deactivates first, so no login or refresh can start a session meanwhile, then revokes every
   * active refresh token. Deactivating a deactivated account still revokes what is left.
   */
  async deactivate(email: string, origin: RequestOrigin): Promise<DeactivationResult> {
    const user = await this.findUser(email);
    const changed = await this.setActiveRecorded(user.id, false, 'admin_user_deactivated', origin);
    if (changed) {
      this.logger.log(`User ${user.id} deactivated by an administrator`);
    }
    const revoked = await this.tokensService.revokeAll(user.id, origin, {
      reason: AdminMessages.deactivatedReason,
    });
    return { account: accountOf(user), changed, revokedTokenCount: revoked.sessionIds.length };
  }

  /** Sets `isActive` and records the administrator's event in the same transaction. */
  private setActiveRecorded(
    userId: string,
    active: boolean,
    type: 'admin_user_activated' | 'admin_user_deactivated',
    origin: RequestOrigin,
  ): Promise<boolean> {
    return this.unitOfWork.transaction(async (m) => {
      const changed = await this.usersService.setActive(userId, active, m);
      await this.events.record(m, { type, userId, changed }, origin);
      return changed;
    });
  }

  async activate(email: string, origin: RequestOrigin): Promise<ActivationResult> {
    const user = await this.findUser(email);
    const changed = await this.setActiveRecorded(user.id, true, 'admin_user_activated', origin);
    if (changed) {
      this.logger.log(`User ${user.id} activated by an administrator`);
    }
    return { account: accountOf(user), changed };
  }

  /**
   * Clears the failed-attempt counter and any lockout. Written only if the state is still the one
   * read, as a login writes it, so a failure counted meanwhile is cleared too, and reported.
   */
  async unlock(email: string, origin: RequestOrigin): Promise<UnlockResult> {
    return this.usersService.retryOnLoginStateChange(
      await this.findUser(email),
      async (current): Promise<UnlockResult | null> => {
        const { failedLoginAttempts: failedAttempts, lockoutEnd: lockedUntil } = current;
        const isClear = failedAttempts === 0 && lockedUntil === null;
        const cleared = { failedLoginAttempts: 0, lockoutEnd: null };
        const unlocked = await this.unitOfWork.transaction(async (m) => {
          if (
            !isClear &&
            !(await this.usersService.replaceLoginState(current.id, current, cleared, m))
          ) {
            return false;
          }
          await this.events.record(
            m,
            { type: 'admin_user_unlocked', userId: current.id, failedAttempts, lockedUntil },
            origin,
          );
          return true;
        });
        if (!unlocked) {
          return null;
        }
        this.logger.log(`User ${current.id} unlocked by an administrator`);
        return { account: accountOf(current), failedAttempts, lockedUntil };
      },
      { whenGone: (last) => new NotFoundError(AdminMessages.unknownUser(last.email)) },
    );
  }

  /**
   * Deletes an account as DELETE /api/auth/me does, without its password: its refresh tokens,
   * mailed-link tokens and unsent mail go with it; its audit rows stay, keyed by the id only.
   */
  async deleteUser(email: string, origin: RequestOrigin): Promise<Account> {
    const user = await this.findUser(email);
    await this.unitOfWork.transaction(async (m) => {
      if (!(await this.usersService.delete(user.id, m))) {
        throw new NotFoundError(AdminMessages.unknownUser(user.email));
      }
      await this.events.record(m, { type: 'admin_user_deleted', userId: user.id }, origin);
    });
    this.logger.log(`User ${user.id} deleted by an administrator`);
    return accountOf(user);
  }

  /**
   * Removes a lost second factor (pending or on) and its recovery codes, so the account logs in
   * with its password alone. Sessions are left alone: the owner asked for help, not a logout.
   */
  async resetMfa(email: string, origin: RequestOrigin): Promise<ActivationResult> {
    const user = await this.findUser(email);
    const changed = await this.unitOfWork.transaction(async (m) => {
      const removed = await this.totpFactors.remove(m, user.id);
      await this.events.record(
        m,
        { type: 'admin_totp_reset', userId: user.id, changed: removed },
        origin,
      );
      return removed;
    });
    if (changed) {
      this.logger.log(`Second factor of user ${user.id} removed by an administrator`);
    }
    return { account: accountOf(user), changed };
  }

  /**
   * Removes every passkey of an account (lost or stolen devices): they sign in nowhere from now
   * on. Sessions are left alone, as at users:mfa-reset.
   */
  async removePasskeys(email: string, origin: RequestOrigin): Promise<PasskeysRemovedResult> {
    const user = await this.findUser(email);
    const removedCount = await this.passkeys.removeAllByAdministrator(user.id, origin);
    return { account: accountOf(user), removedCount };
  }

  async revokeAllSessions(email: string, origin: RequestOrigin): Promise<SessionsResult> {
    const user = await this.findUser(email);
    const revoked = await this.tokensService.revokeAll(user.id, origin, {
      reason: AdminMessages.revokedReason,
      alongside: (m, { sessionIds }) =>
        this.events.record(
          m,
          {
            type: 'admin_sessions_revoked',
            userId: user.id,
            revokedTokenCount: sessionIds.length,
          },
          origin,
        ),
    });
    this.logger.log(`Sessions of user ${user.id} revoked by an administrator`);
    return { account: accountOf(user), revokedTokenCount: revoked.sessionIds.length };
  }

  /**
   * The accounts whose stored addresses are one address in canonical form, which the e-mail
   * migration refuses to merge. A read-only diagnostic that runs before migrations, so it
   * records no audit event (the trail may not be writable at that schema version).
   */
  async emailCollisions(): Promise<EmailCollision<AccountSummary>[]> {
    return emailCollisions(await this.usersService.listAccounts());
  }

  /** The scheduled expired-token cleanup, run once now; returns how many tokens it deleted. */
  async purgeExpiredTokens(origin: RequestOrigin): Promise<number> {
    const deletedCount = await this.tokenCleanup.purgeExpired();
    // The purge commits batch by batch; its summary is an event of its own, after the last.
    await this.events.recordAlone(
      { type: 'admin_tokens_purged', userId: null, deletedCount },
      origin,
    );
    return deletedCount;
  }

  /** The audit purge, run once now (Audit__RetentionDays applies); recorded with its counts. */
  async purgeAudit(origin: RequestOrigin): Promise<AuditPurgeResult> {
    const result = await this.auditRetention.purge();
    // As purgeExpiredTokens: batches, then their summary.
    await this.events.recordAlone({ type: 'admin_audit_purged', userId: null, ...result }, origin);
    return result;
  }

  /**
   * Hands every audit event older than `before` to `write`, oldest first, waiting for each
   * write; returns how many. A finished export is recorded (what the trail holds is personal
   * data, and copying it out is an act worth knowing of).
   */
  async exportAudit(
    before: Date,
    write: (entry: AuditEntry) => Promise<void>,
    origin: RequestOrigin,
  ): Promise<number> {
    let rowCount = 0;
    for await (const entry of this.auditRetention.entriesBefore(before)) {
      await write(entry);
      rowCount += 1;
    }
    await this.events.recordAlone(
      { type: 'admin_audit_exported', userId: null, before, rowCount },
      origin,
    );
    return rowCount;
  }

  /** The newest `limit` audit events of an account. Reading them is itself recorded. */
  async auditOf(email: string, limit: number, origin: RequestOrigin): Promise<AuditResult> {
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_AUDIT_LIMIT) {
      throw new InvalidArgumentError(AdminMessages.auditLimitOutOfRange(1, MAX_AUDIT_LIMIT));
    }
    const user = await this.findUser(email);
    const entries = await this.auditTrail.latestForUser(user.id, limit);
    await this.events.recordAlone(
      { type: 'admin_audit_viewed', userId: user.id, rowCount: entries.length },
      origin,
    );
    return { account: accountOf(user), entries };
  }

  private async findUser(email: string): Promise<User> {
    const normalized = normalizeEmail(email);
    const user = await this.usersService.findByEmail(normalized);
    if (user === null) {
      throw new NotFoundError(AdminMessages.unknownUser(normalized));
    }
    return user;
  }
}

function accountOf(user: User): Account {
  return { id: user.id, email: user.email };
}
