import { Injectable, Logger } from '@nestjs/common';
import { AuditRetentionService, type AuditPurgeResult } from '../audit/audit-retention.service.js';
import { AuditTrail, type AuditEntry, type AuditPageQuery } from '../audit/audit-trail.service.js';
import { InvalidArgumentError, NotFoundError } from '../common/errors/domain-errors.js';
import { Clock } from '../common/time/clock.js';
import type { AdminApiActor } from '../events/auth-event.js';
import type { ListedSession } from '../tokens/entities/session.entity.js';
import { UsersMessages } from '../users/users.messages.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { AuthEvents } from '../events/auth-events.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { TotpFactors } from '../two-factor/totp-factors.service.js';
import type { Passkey } from '../passkeys/entities/passkey.entity.js';
import { Passkeys } from '../passkeys/passkeys.service.js';
import { TokenCleanupService } from '../tokens/cleanup/token-cleanup.service.js';
import { TokensService } from '../tokens/tokens.service.js';
import { normalizeEmail } from '../common/identity/email.js';
import { emailCollisions, type EmailCollision } from '../common/identity/email-collisions.js';
import type { User } from '../users/entities/user.entity.js';
import {
  UsersService,
  type AccountPageQuery,
  type AccountSummary,
} from '../users/users.service.js';
import { AdminApiMessages } from './admin-api.messages.js';
import { AdminMessages } from './admin.messages.js';

export const DEFAULT_AUDIT_LIMIT = 50;
export const MAX_AUDIT_LIMIT = 1_000;

/**
 * How an operator names an account: the CLI by e-mail (normalised as the API does), the admin API
 * by id. An unknown one is a NotFoundError, in the words of whoever asked.
 */
export type AccountRef = { readonly email: string } | { readonly id: string };

/** The states the account listing filters on (docs/operations/admin-api.md). */
export const ACCOUNT_STATES = ['active', 'deactivated', 'locked', 'unverified', 'mfa'] as const;
export type AccountStateFilter = (typeof ACCOUNT_STATES)[number];

/** A listing's page: the rows and where the next page starts (null: this was the last). */
export interface Page<T> {
  readonly items: readonly T[];
  readonly next: string | null;
}

export interface AccountQuery {
  /** An exact e-mail (normalised); at most one account. */
  readonly email: string | null;
  readonly emailPrefix: string | null;
  readonly state: AccountStateFilter | null;
  /** The order column's value of the last account seen; '' for the first page. */
  readonly after: string;
  readonly limit: number;
}

/** What an operator sees of one account. */
export interface AccountDetails {
  readonly user: User;
  readonly isLockedOut: boolean;
  /** The second factors: the TOTP factor (pending or confirmed), then the passkeys, oldest first. */
  readonly factors: readonly SecondFactor[];
  readonly activeSessionCount: number;
}

export type SecondFactor =
  | {
      readonly kind: 'totp';
      /** Null while enrolment is pending (not yet a factor). */
      readonly confirmedAt: Date | null;
      readonly createdAt: Date;
    }
  | {
      readonly kind: 'passkey';
      /** A passkey is a factor from its registration. */
      readonly confirmedAt: Date;
      readonly createdAt: Date;
      readonly passkey: Passkey;
    };

export interface SessionEndResult {
  readonly account: Account;
  /** False when the session had already ended or expired. */
  readonly changed: boolean;
}

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
    private readonly clock: Clock,
  ) {}

  /**
   * Deactivates first, so no login or refresh can start a session meanwhile, then revokes every
   * active refresh token. Deactivating a deactivated account still revokes what is left.
   */
  async deactivate(
    account: AccountRef,
    origin: RequestOrigin,
    actor?: AdminApiActor,
  ): Promise<DeactivationResult> {
    const user = await this.findUser(account);
    const changed = await this.setActiveRecorded(
      user.id,
      false,
      'admin_user_deactivated',
      origin,
      actor,
    );
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
    actor: AdminApiActor | undefined,
  ): Promise<boolean> {
    return this.unitOfWork.transaction(async (m) => {
      const changed = await this.usersService.setActive(userId, active, m);
      await this.events.record(m, { type, userId, changed, actor }, origin);
      return changed;
    });
  }

  async activate(
    account: AccountRef,
    origin: RequestOrigin,
    actor?: AdminApiActor,
  ): Promise<ActivationResult> {
    const user = await this.findUser(account);
    const changed = await this.setActiveRecorded(
      user.id,
      true,
      'admin_user_activated',
      origin,
      actor,
    );
    if (changed) {
      this.logger.log(`User ${user.id} activated by an administrator`);
    }
    return { account: accountOf(user), changed };
  }

  /**
   * Clears the failed-attempt counter and any lockout. Written only if the state is still the one
   * read, as a login writes it, so a failure counted meanwhile is cleared too, and reported.
   */
  async unlock(
    account: AccountRef,
    origin: RequestOrigin,
    actor?: AdminApiActor,
  ): Promise<UnlockResult> {
    return this.usersService.retryOnLoginStateChange(
      await this.findUser(account),
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
            {
              type: 'admin_user_unlocked',
              userId: current.id,
              failedAttempts,
              lockedUntil,
              actor,
            },
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
      { whenGone: () => unknownAccount(account) },
    );
  }

  /**
   * Deletes an account as DELETE /api/auth/me does, without its password: its refresh tokens,
   * mailed-link tokens and unsent mail go with it; its audit rows stay, keyed by the id only.
   */
  async deleteUser(
    account: AccountRef,
    origin: RequestOrigin,
    actor?: AdminApiActor,
  ): Promise<Account> {
    const user = await this.findUser(account);
    await this.unitOfWork.transaction(async (m) => {
      if (!(await this.usersService.delete(user.id, m))) {
        throw unknownAccount(account);
      }
      await this.events.record(m, { type: 'admin_user_deleted', userId: user.id, actor }, origin);
    });
    this.logger.log(`User ${user.id} deleted by an administrator`);
    return accountOf(user);
  }

  /**
   * Removes a lost second factor (pending or on) and its recovery codes, so the account logs in
   * with its password alone. Sessions are left alone: the owner asked for help, not a logout.
   */
  async resetMfa(
    account: AccountRef,
    origin: RequestOrigin,
    actor?: AdminApiActor,
  ): Promise<ActivationResult> {
    const user = await this.findUser(account);
    const changed = await this.unitOfWork.transaction(async (m) => {
      const removed = await this.totpFactors.remove(m, user.id);
      await this.events.record(
        m,
        { type: 'admin_totp_reset', userId: user.id, changed: removed, actor },
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
  async removePasskeys(
    account: AccountRef,
    origin: RequestOrigin,
    actor?: AdminApiActor,
  ): Promise<PasskeysRemovedResult> {
    const user = await this.findUser(account);
    const removedCount = await this.passkeys.removeAllByAdministrator(user.id, origin, actor);
    return { account: accountOf(user), removedCount };
  }

  async revokeAllSessions(
    account: AccountRef,
    origin: RequestOrigin,
    actor?: AdminApiActor,
  ): Promise<SessionsResult> {
    const user = await this.findUser(account);
    const revoked = await this.tokensService.revokeAll(user.id, origin, {
      reason: AdminMessages.revokedReason,
      alongside: (m, { sessionIds }) =>
        this.events.record(
          m,
          {
            type: 'admin_sessions_revoked',
            userId: user.id,
            revokedTokenCount: sessionIds.length,
            actor,
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
    const user = await this.findUser({ email });
    const entries = await this.auditTrail.latestForUser(user.id, limit);
    await this.events.recordAlone(
      { type: 'admin_audit_viewed', userId: user.id, rowCount: entries.length },
      origin,
    );
    return { account: accountOf(user), entries };
  }

  /**
   * Marks the account's current address verified, as its link would (a support agent saw proof
   * another way). False when it already was.
   */
  async verifyEmail(
    account: AccountRef,
    origin: RequestOrigin,
    actor?: AdminApiActor,
  ): Promise<ActivationResult> {
    const user = await this.findUser(account);
    const changed = await this.unitOfWork.transaction(async (m) => {
      const marked =
        user.emailVerifiedAt === null &&
        (await this.usersService.markEmailVerified(user.id, user.email, this.clock.now(), m));
      await this.events.record(
        m,
        { type: 'admin_email_verified', userId: user.id, changed: marked, actor },
        origin,
      );
      return marked;
    });
    return { account: accountOf(user), changed };
  }

  /** The account with what an operator needs to help it: lockout, factors, session count. */
  async accountDetails(account: AccountRef): Promise<AccountDetails> {
    const user = await this.findUser(account);
    const [factor, passkeys, sessions] = await Promise.all([
      this.totpFactors.factorOf(user.id),
      this.passkeys.listForAdministrator(user.id),
      this.tokensService.activeSessions(user.id),
    ]);
    const factors: SecondFactor[] = [
      ...(factor === null
        ? []
        : [
            {
              kind: 'totp' as const,
              confirmedAt: factor.confirmedAt,
              createdAt: factor.createdAt,
            },
          ]),
      ...passkeys.map((passkey) => ({
        kind: 'passkey' as const,
        confirmedAt: passkey.createdAt,
        createdAt: passkey.createdAt,
        passkey,
      })),
    ];
    return {
      user,
      isLockedOut: isLockedOut(user, this.clock.now()),
      factors,
      activeSessionCount: sessions.length,
    };
  }

  /**
   * A page of accounts: one by exact e-mail, or a listing by id (by e-mail with a prefix),
   * filtered by state. `mfa` pages through the accounts with a confirmed factor instead.
   */
  async findAccounts(query: AccountQuery): Promise<Page<User>> {
    if (query.email !== null) {
      const user = await this.usersService.findByEmail(normalizeEmail(query.email));
      const matches =
        user !== null &&
        user.id > query.after &&
        (query.state === null || (await this.hasState(user, query.state)));
      return { items: matches ? [user] : [], next: null };
    }
    // One more than asked for says whether another page follows.
    const take = query.limit + 1;
    let users: User[];
    if (query.state === 'mfa') {
      if (query.emailPrefix !== null) {
        throw new InvalidArgumentError(AdminApiMessages.mfaWithPrefix);
      }
      users = await this.usersService.findByIds(
        await this.totpFactors.confirmedAfter(query.after, take),
      );
    } else {
      const pageQuery: AccountPageQuery = {
        emailPrefix: query.emailPrefix === null ? null : normalizeEmail(query.emailPrefix),
        filter: query.state,
        after: query.after,
        limit: take,
        now: this.clock.now(),
      };
      users = await this.usersService.listPage(pageQuery);
    }
    const items = users.slice(0, query.limit);
    const last = items.at(-1);
    const next =
      users.length > query.limit && last !== undefined
        ? query.emailPrefix !== null
          ? last.email
          : last.id
        : null;
    return { items, next };
  }

  /** The active sessions of the account, most recently used first. */
  async sessionsOf(account: AccountRef): Promise<{ account: Account; sessions: ListedSession[] }> {
    const user = await this.findUser(account);
    return { account: accountOf(user), sessions: await this.tokensService.activeSessions(user.id) };
  }

  /** Ends one session of the account; a session of another account is unknown (404). */
  async endSession(
    account: AccountRef,
    sessionId: string,
    origin: RequestOrigin,
    actor?: AdminApiActor,
  ): Promise<SessionEndResult> {
    const user = await this.findUser(account);
    const changed = await this.tokensService.endSession(user.id, sessionId, origin, {
      reason: AdminMessages.revokedReason,
      alongside: (m, ended) =>
        this.events.record(
          m,
          {
            type: 'admin_session_ended',
            userId: user.id,
            familyId: sessionId,
            changed: ended,
            actor,
          },
          origin,
        ),
    });
    if (changed === null) {
      throw new NotFoundError(AdminApiMessages.sessionNotFound);
    }
    return { account: accountOf(user), changed };
  }

  /**
   * A page of the audit trail, newest first. Reading it changes nothing and is not itself an
   * event (unlike the CLI's `audit`, one call per account); the metrics count every call.
   */
  async auditPage(query: AuditPageQuery): Promise<Page<AuditEntry>> {
    const entries = await this.auditTrail.page({ ...query, limit: query.limit + 1 });
    const items = entries.slice(0, query.limit);
    const last = items.at(-1);
    return { items, next: entries.length > query.limit && last !== undefined ? last.id : null };
  }

  /**
   * Every event matching `query`, newest first, page by page (never the whole trail in memory).
   * The export is recorded before its first line: copying the trail out is worth knowing of,
   * even when the copy is cut short.
   */
  async *exportAuditLines(
    query: Omit<AuditPageQuery, 'before' | 'limit'>,
    origin: RequestOrigin,
    actor: AdminApiActor,
  ): AsyncGenerator<AuditEntry> {
    await this.events.recordAlone(
      {
        type: 'admin_audit_export_started',
        userId: query.userId,
        eventType: query.type,
        from: query.from,
        to: query.to,
        actor,
      },
      origin,
    );
    let before: string | null = null;
    for (;;) {
      const page = await this.auditPage({ ...query, before, limit: MAX_AUDIT_LIMIT });
      yield* page.items;
      if (page.next === null) {
        return;
      }
      before = page.next;
    }
  }

  private async hasState(user: User, state: AccountStateFilter): Promise<boolean> {
    switch (state) {
      case 'active':
        return user.isActive;
      case 'deactivated':
        return !user.isActive;
      case 'locked':
        return isLockedOut(user, this.clock.now());
      case 'unverified':
        return user.emailVerifiedAt === null;
      case 'mfa':
        return ((await this.totpFactors.factorOf(user.id))?.confirmedAt ?? null) !== null;
    }
  }

  /** The account `account` names; NotFoundError in the caller's words when there is none. */
  async findUser(account: AccountRef): Promise<User> {
    const user =
      'id' in account
        ? await this.usersService.findById(account.id)
        : await this.usersService.findByEmail(normalizeEmail(account.email));
    if (user === null) {
      throw unknownAccount(account);
    }
    return user;
  }
}

function accountOf(user: User): Account {
  return { id: user.id, email: user.email };
}

/** SPEC §3.1: a lockout lasts until its end; an elapsed one no longer locks. */
function isLockedOut(user: User, now: Date): boolean {
  return user.lockoutEnd !== null && user.lockoutEnd.getTime() > now.getTime();
}

/** The CLI's English sentence for an e-mail; the API's SPEC text for an id. */
function unknownAccount(account: AccountRef): NotFoundError {
  return new NotFoundError(
    'id' in account
      ? UsersMessages.notFound
      : AdminMessages.unknownUser(normalizeEmail(account.email)),
  );
}
