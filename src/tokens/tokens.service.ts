import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { UnauthorizedError } from '../common/errors/domain-errors.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/app-config.js';
import type { GuardedWrite, Precondition } from '../database/guarded-write.js';
import type { AuthEvent, RefreshFailureReason } from '../events/auth-event.js';
import { AuthEvents } from '../events/auth-events.js';
import { forRequest } from '../logging/log-fields.js';
import { UserResponseDto } from '../users/dto/user-response.dto.js';
import type { User } from '../users/entities/user.entity.js';
import { UsersMessages } from '../users/users.messages.js';
import { UsersService } from '../users/users.service.js';
import { AccessTokenService, type AccessTokenIssue } from './access-token.service.js';
import {
  parseAuthMethods,
  PASSWORD_ONLY,
  storedAuthMethods,
  type AuthMethod,
} from './auth-methods.js';
import { AuthResponseDto } from './dto/auth-response.dto.js';
import type { MessageResponseDto } from './dto/message-response.dto.js';
import type { RevokeDto } from './dto/revoke.dto.js';
import { RefreshToken } from './entities/refresh-token.entity.js';
import { Session, type ListedSession } from './entities/session.entity.js';
import {
  isActiveToken,
  RefreshTokenRepository,
  type PresentedToken,
  type RefreshTokenUnit,
  type Revocation,
  type Rotation,
} from './storage/refresh-token.repository.js';
import { RefreshSuccessors } from './storage/refresh-successors.js';
import { generateRefreshTokenValue, hashRefreshToken } from './storage/refresh-token-value.js';
import { SessionRepository, type SessionUse } from './storage/session.repository.js';
import { TokensMessages } from './tokens.messages.js';
import { RandomSource } from '../common/random/random-source.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * What a refresh attempt found, decided inside one unit of work and acted on outside it: the
 * answer, and the event to tell once the unit has committed.
 */
type RefreshOutcome =
  | {
      readonly grant: Grant;
      readonly event: AuthEvent & { type: 'token_refreshed' | 'refresh_retried' };
    }
  | {
      readonly grant?: never;
      readonly event: AuthEvent & { type: 'refresh_failed' | 'reuse_detected' };
    };

/**
 * What a successful rotation grants: the answer is built from it once the unit committed, since
 * signing the access token may wait for a signature on libuv's pool (an asymmetric key), and no
 * unit waits for anything but the database.
 */
interface Grant {
  readonly user: User;
  readonly sessionId: string;
  readonly refreshToken: string;
  readonly authMethods: readonly AuthMethod[];
  /** A derived successor's access-token instant and id, so that a retry signs it again. */
  readonly issue?: AccessTokenIssue;
}

/**
 * A rotation's successor: its raw value and digest, and, when Jwt__RefreshRetryWindowSeconds
 * derives it (RefreshSuccessors), the `jti` of the access token issued beside it.
 */
interface Successor {
  readonly raw: string;
  readonly hash: Buffer;
  readonly accessTokenId?: string;
}

/** A token issued to start a session, with the family it started. */
export interface IssuedSession {
  readonly response: AuthResponseDto;
  readonly familyId: string;
}

/** How a session starts: after which write on the account, told as which event. */
export interface SessionStart {
  /** The account's write the start is conditional on (UsersService.insertWrite, loginStateWrite). */
  readonly account: GuardedWrite;
  /** How the session was authenticated (the `amr` claim). */
  readonly authMethods: readonly AuthMethod[];
  /** The event that tells of it, for the session `familyId`. */
  readonly event: (familyId: string) => AuthEvent;
  /** What must hold before anything is written (a login with no second factor to ask for). */
  readonly requires?: Precondition;
  /**
   * More to write in the same transaction (registration's verification mail): the start then
   * takes a transaction of the unit of work on PostgreSQL too, instead of its one statement.
   */
  readonly alongside?: (manager: EntityManager) => Promise<void>;
}

/** What revokeAll ended. */
export interface RevokedSessions {
  /** The sessions (token families) it ended. */
  readonly sessionIds: string[];
}

/** Refresh tokens: issuing, rotation with reuse detection, and revocation. */
@Injectable()
export class TokensService {
  private readonly logger = new Logger(TokensService.name);
  private readonly refreshLifetimeMs: number;
  private readonly requireVerifiedEmail: boolean;
  private readonly maxActiveSessions: number;

  constructor(
    private readonly tokens: RefreshTokenRepository,
    private readonly sessions: SessionRepository,
    private readonly usersService: UsersService,
    private readonly accessTokens: AccessTokenService,
    private readonly clock: Clock,
    private readonly random: RandomSource,
    private readonly events: AuthEvents,
    private readonly successors: RefreshSuccessors,
    config: AppConfig,
  ) {
    this.refreshLifetimeMs = config.jwt.refreshTokenExpiryDays * DAY_MS;
    this.requireVerifiedEmail = config.accountFlows.requireVerifiedEmail;
    this.maxActiveSessions = config.sessions.maxActivePerUser;
  }

  /**
   * Starts a new token family for `user` and returns the auth response. Runs inside the
   * caller's transaction so that the login or registration and its token commit together.
   * `authMethods` says how the session was authenticated (the `amr` claim); a password alone
   * unless the caller says otherwise.
   */
  async issue(
    user: User,
    origin: RequestOrigin,
    manager: EntityManager,
    authMethods: readonly AuthMethod[] = PASSWORD_ONLY,
  ): Promise<IssuedSession> {
    const familyId = this.random.uuid();
    const now = this.clock.now();
    const { raw, hash } = generateRefreshTokenValue(this.random);
    const { session, first } = this.firstRows(user, familyId, hash, authMethods, origin, now);
    // Sessions__MaxActivePerUser: the sessions past it, least recently used first, end here.
    await this.tokens.startSession(manager, session, first, this.maxActiveSessions, {
      at: now,
      ip: origin.ip,
      reason: TokensMessages.sessionLimitReason,
    });
    return { response: this.respond(user, familyId, raw, authMethods), familyId };
  }

  /**
   * Starts a new token family for `user` if, and only if, `start.account`'s write succeeds, all
   * of it atomically with the event's audit row: on PostgreSQL in one statement (one round trip),
   * unless `start.alongside` has more to write (decision 0034). Nothing is written, and the
   * answer says why, when `start.requires` does not hold (`refused`) or the account's write did
   * not match (`changed`: a login's account changed since it was read).
   */
  async start(
    user: User,
    origin: RequestOrigin,
    start: SessionStart,
  ): Promise<IssuedSession | 'changed' | 'refused'> {
    const familyId = this.random.uuid();
    const now = this.clock.now();
    const { raw, hash } = generateRefreshTokenValue(this.random);
    const { session, first } = this.firstRows(user, familyId, hash, start.authMethods, origin, now);
    const event = start.event(familyId);
    // On the transaction path the event is recorded in it (listeners hear of it after the
    // commit); on PostgreSQL's one statement its row is written there and listeners told here.
    let recorded = false;
    const started = await this.tokens.startSessionAfter(
      start.account,
      session,
      first,
      this.maxActiveSessions,
      { at: now, ip: origin.ip, reason: TokensMessages.sessionLimitReason },
      {
        within: async (m) => {
          await this.events.record(m, event, origin);
          recorded = true;
        },
        record: { event, origin, at: now },
      },
      { requires: start.requires, alongside: start.alongside },
    );
    if (started !== 'started') {
      return started;
    }
    if (!recorded) {
      this.events.committed(event, origin, now);
    }
    return { response: this.respond(user, familyId, raw, start.authMethods), familyId };
  }

  /** A new session's row and its first token's (generation 0), as issue and start write them. */
  private firstRows(
    user: User,
    familyId: string,
    hash: Buffer,
    authMethods: readonly AuthMethod[],
    origin: RequestOrigin,
    now: Date,
  ): { readonly session: Session; readonly first: RefreshToken } {
    const use = this.useAt(origin, now);
    const session = Object.assign(new Session(), {
      id: familyId,
      userId: user.id,
      startedAt: now,
      authMethods: storedAuthMethods(authMethods),
      generation: 0,
      lastUsedAt: now,
      lastIp: use.ip,
      lastUserAgent: use.userAgent,
      expiresAt: use.expiresAt,
      oldestTokenAt: now,
      endedAt: null,
      endedByIp: null,
      endReason: null,
    });
    const first = Object.assign(new RefreshToken(), {
      tokenHash: hash,
      sessionId: familyId,
      generation: 0,
      createdAt: now,
    });
    return { session, first };
  }

  /**
   * Spec §3.2: rotates a valid token, or says why not. The rotation is one statement (one unit
   * on SQLite) that also reads the token and its owner; when it did not rotate, what it read
   * says why, unless the token was revoked (reuse detection writes) or changed under it (a
   * concurrent rotation won): those take the careful path, with the family's lock held.
   */
  async refresh(rawToken: string, origin: RequestOrigin): Promise<AuthResponseDto> {
    const tokenHash = hashRefreshToken(rawToken);
    const now = this.clock.now();
    const successor = this.successorOf(rawToken);
    // The outcome's event is recorded in the rotation's own transaction on SQLite, whatever it
    // found; on PostgreSQL the statement writes the `token_refreshed` row when it rotates.
    let recorded = false;
    const rotation = await this.tokens.rotate(
      tokenHash,
      successor.hash,
      this.useAt(origin, now),
      { ownerVerified: this.requireVerifiedEmail },
      {
        withinSqlite: (db, found) => {
          // Only the event here: the access token is signed after the unit, lock released.
          const event = this.eventOf(found, now);
          if (event !== null) {
            this.events.recordOnSqlite(db, event, origin);
            recorded = true;
          }
        },
        refreshedRecord: () => ({ event: REFRESHED_TEMPLATE, origin, at: now }),
      },
    );
    const outcome = this.outcomeOf(rotation, successor, now);
    if (outcome === null) {
      // Reuse, a retry, or a lost race: the careful path records its event in its own transaction.
      return this.settle(await this.refreshCarefully(rawToken, tokenHash, origin), origin);
    }
    if (!recorded) {
      if (rotation.rotated) {
        this.events.committed(outcome.event, origin, now);
      } else {
        await this.events.recordAlone(outcome.event, origin);
      }
    }
    return this.settle(outcome, origin);
  }

  /** The event of what a rotation found, or null when only the careful path can tell. */
  private eventOf(rotation: Rotation, now: Date): AuthEvent | null {
    return rotation.rotated
      ? refreshedEvent(rotation.owner, rotation.presented)
      : (this.refusalOf(rotation.presented, rotation.owner, now)?.event ?? null);
  }

  /** What a rotation that ran says, or null when only the careful path can tell. */
  private outcomeOf(rotation: Rotation, successor: Successor, now: Date): RefreshOutcome | null {
    return rotation.rotated
      ? this.rotated(rotation.owner, rotation.presented, successor, now)
      : this.refusalOf(rotation.presented, rotation.owner, now);
  }

  /**
   * The successor a rotation of `rawToken` issues: random, as the interface's rotation always
   * was; derived from it while Jwt__RefreshRetryWindowSeconds is on, so that a retry within the
   * window can be given the same pair again (decision 0040).
   */
  private successorOf(rawToken: string): Successor {
    return this.successors.enabled
      ? this.successors.successorOf(rawToken)
      : generateRefreshTokenValue(this.random);
  }

  /**
   * Why a token that was read is refused, when saying so writes nothing; null when it was revoked
   * (reuse detection must write) or it looked rotatable (then only the careful path can tell).
   */
  private refusalOf(
    presented: PresentedToken | null,
    owner: User | null,
    now: Date,
  ): RefreshOutcome | null {
    if (presented === null) {
      return refreshFailed(null, 'invalid');
    }
    if (isRevoked(presented)) {
      return null;
    }
    return hasExpired(presented, now)
      ? refreshFailed(presented.session.userId, 'expired')
      : this.ownerRefusalOf(owner);
  }

  private ownerRefusalOf(owner: User | null): RefreshOutcome | null {
    if (owner === null) {
      return refreshFailed(null, 'invalid');
    }
    if (!owner.isActive) {
      return refreshFailed(owner.id, 'deactivated');
    }
    // Opt-in: a session of an unverified account cannot be extended, as it could not be opened.
    if (this.requireVerifiedEmail && owner.emailVerifiedAt === null) {
      return refreshFailed(owner.id, 'unverified');
    }
    return null;
  }

  /**
   * Refresh in one transaction with the token's family held: reuse detection, a retry within
   * Jwt__RefreshRetryWindowSeconds, or a lost race.
   */
  private refreshCarefully(
    rawToken: string,
    tokenHash: Buffer,
    origin: RequestOrigin,
  ): Promise<RefreshOutcome> {
    return this.tokens.atomically(async (unit): Promise<RefreshOutcome> => {
      const outcome = await this.decideCarefully(unit, rawToken, tokenHash, origin);
      await this.events.record(unit.manager, outcome.event, origin);
      return outcome;
    });
  }

  private async decideCarefully(
    unit: RefreshTokenUnit,
    rawToken: string,
    tokenHash: Buffer,
    origin: RequestOrigin,
  ): Promise<RefreshOutcome> {
    const now = this.clock.now();
    const presented = await unit.findByHash(tokenHash);
    if (presented === null) {
      return refreshFailed(null, 'invalid');
    }
    const { token, session } = presented;
    if (isRevoked(presented)) {
      const retried = this.successors.enabled
        ? await this.retryOf(unit, rawToken, presented, now)
        : null;
      if (retried !== null) {
        return retried;
      }
      // An older generation (rotated), or the newest of an ended session: reuse. The session
      // ends, if it has not, in one update.
      const sessionEnded = await unit.endSession(session.id, {
        at: now,
        ip: origin.ip,
        reason: TokensMessages.reuseDetectedReason,
      });
      const { userId, id: familyId } = session;
      const { generation } = token;
      return { event: { type: 'reuse_detected', userId, familyId, generation, sessionEnded } };
    }
    if (hasExpired(presented, now)) {
      return refreshFailed(session.userId, 'expired');
    }
    const owner = await this.usersService.findById(session.userId, unit.manager);
    const refusal = this.ownerRefusalOf(owner);
    if (refusal !== null || owner === null) {
      return refusal ?? refreshFailed(null, 'invalid');
    }
    return this.rotateWithin(unit, rawToken, presented, owner, now, origin);
  }

  /**
   * Jwt__RefreshRetryWindowSeconds: the pair a rotation of `presented` issued, issued again, when
   * `presented` is the immediate predecessor of its session's newest token, the session active,
   * that newest token the successor derived from `rawToken`, created less than the window ago
   * (the rotation that revoked `presented`), and the owner still allowed to refresh. Null
   * otherwise: the caller goes on as the interface says (reuse detection for a revoked token).
   * Writes nothing: the caller records the `refresh_retried` event.
   */
  private async retryOf(
    unit: RefreshTokenUnit,
    rawToken: string,
    presented: PresentedToken,
    now: Date,
  ): Promise<RefreshOutcome | null> {
    const { token, session } = presented;
    if (token.generation !== session.generation - 1 || !session.isActiveAt(now)) {
      return null;
    }
    for (const candidate of this.successors.candidatesOf(rawToken)) {
      const newest = await unit.findToken(candidate.hash);
      if (newest?.sessionId !== session.id || newest.generation !== session.generation) {
        continue;
      }
      if (now.getTime() - newest.createdAt.getTime() >= this.successors.windowMs) {
        return null;
      }
      const owner = await this.usersService.findById(session.userId, unit.manager);
      if (owner === null || this.ownerRefusalOf(owner) !== null) {
        return null;
      }
      const issue = { at: newest.createdAt, id: candidate.accessTokenId };
      const methods = parseAuthMethods(session.authMethods);
      return {
        grant: {
          user: owner,
          sessionId: session.id,
          refreshToken: candidate.raw,
          authMethods: methods,
          issue,
        },
        event: {
          type: 'refresh_retried',
          userId: owner.id,
          familyId: session.id,
          generation: token.generation,
        },
      };
    }
    return null;
  }

  /**
   * Spec §4.2 revoke. A token that is not the bearer's is treated as not found. Revoking an
   * already revoked token succeeds and keeps the first revocation's reason and IP; if it had
   * been rotated, the session it led to is ended too, so a logout always logs out.
   */
  async revoke(
    userId: string,
    request: RevokeDto,
    origin: RequestOrigin,
  ): Promise<MessageResponseDto> {
    const tokenHash = hashRefreshToken(request.refreshToken);
    const reason = request.reason ?? TokensMessages.defaultRevokeReason;
    const at = this.clock.now();
    // The event of what was done; recorded in the unit on SQLite, written by the statement on
    // PostgreSQL (whose listeners are told here, once it committed).
    const revokedEvent = (revocation: Revocation): AuthEvent => ({
      type: 'token_revoked',
      userId,
      familyId: revocation.sessionId,
      generation: revocation.generation,
      sessionEnded: revocation.sessionEnded,
      wasRotated: revocation.generation < revocation.sessionGeneration,
    });
    let recorded = false;
    // The session ends whichever of its tokens is named, unless it already had.
    const revocation = await this.tokens.revoke(
      tokenHash,
      userId,
      { at, ip: origin.ip, reason },
      {
        within: async (m, done) => {
          await this.events.record(m, revokedEvent(done), origin);
          recorded = true;
        },
        revokedRecord: () => ({ event: REVOKED_TEMPLATE, origin, at }),
      },
    );
    const event = revocation === null ? null : revokedEvent(revocation);
    if (event !== null && !recorded) {
      this.events.committed(event, origin, at);
    }
    if (event === null) {
      throw new UnauthorizedError(TokensMessages.invalid);
    }
    this.logger.log(`Refresh token revoked for user ${userId}`, forRequest(origin.requestId));
    return { message: TokensMessages.revokedOk };
  }

  /**
   * Ends every active session of a user, or every one but `keepFamilyId`. A session is active
   * while its newest token is neither revoked nor expired; expired ones are already over and are
   * left as they are. A rotation running meanwhile either commits before (and its new token is
   * revoked here) or starts after (and finds its token revoked).
   */
  async revokeAll(
    userId: string,
    origin: RequestOrigin,
    options: {
      readonly reason: string;
      readonly keepFamilyId?: string | null;
      /** More to write in the same transaction: the caller's own event. */
      readonly alongside?: (m: EntityManager, revoked: RevokedSessions) => Promise<void>;
    },
  ): Promise<RevokedSessions> {
    const keepFamilyId = options.keepFamilyId ?? null;
    return this.tokens.atomically(async (unit) => {
      const revoked = await this.revokeAllWithin(unit.manager, userId, origin, {
        reason: options.reason,
        keepFamilyId,
      });
      await this.events.record(
        unit.manager,
        { type: 'sessions_revoked', userId, keepFamilyId, endedSessionIds: revoked.sessionIds },
        origin,
      );
      await options.alongside?.(unit.manager, revoked);
      return revoked;
    });
  }

  /**
   * revokeAll inside the caller's transaction, for a change that must end the sessions with it
   * (a new password). Tells no event: the caller's event says why the sessions ended.
   */
  async revokeAllWithin(
    m: EntityManager,
    userId: string,
    origin: RequestOrigin,
    options: { readonly reason: string; readonly keepFamilyId: string | null },
  ): Promise<RevokedSessions> {
    const revocation = { at: this.clock.now(), ip: origin.ip, reason: options.reason };
    const sessionIds = await this.sessions.endActiveOf(m, userId, options.keepFamilyId, revocation);
    return { sessionIds };
  }

  /**
   * Ends the session `sessionId` of `userId` if it is active, with `alongside` (the caller's
   * event) in the same transaction; on PostgreSQL the session's row is locked meanwhile, so a
   * rotation either commits first or finds the session ended. Resolves to whether this call
   * ended it (false: it had already ended or expired), or null when `userId` has no such session.
   */
  async endSession(
    userId: string,
    sessionId: string,
    origin: RequestOrigin,
    options: {
      readonly reason: string;
      readonly alongside: (m: EntityManager, changed: boolean) => Promise<void>;
    },
  ): Promise<boolean | null> {
    return this.tokens.atomically(async (unit) => {
      const session = await this.sessions.findForUpdate(unit.manager, sessionId);
      if (session === null || session.userId !== userId) {
        return null;
      }
      const at = this.clock.now();
      const changed =
        session.isActiveAt(at) &&
        (await unit.endSession(sessionId, { at, ip: origin.ip, reason: options.reason }));
      await options.alongside(unit.manager, changed);
      return changed;
    });
  }

  /**
   * The session whose newest token is `rawToken`, if that session is active; null otherwise (an
   * unknown token, a rotated one, an ended or expired session). A read, for the rules of other
   * modules.
   */
  async activeSessionOf(rawToken: string): Promise<Session | null> {
    const presented = await this.tokens.findByHash(hashRefreshToken(rawToken));
    return presented !== null && isActiveToken(presented, this.clock.now())
      ? presented.session
      : null;
  }

  /** The session `sessionId`, or null; one primary-key read (the session check). */
  findSession(sessionId: string): Promise<Session | null> {
    return this.sessions.findById(sessionId);
  }

  /** The active sessions of `userId`, most recently used first. */
  activeSessions(userId: string): Promise<ListedSession[]> {
    return this.sessions.activeOf(userId, this.clock.now());
  }

  private async rotateWithin(
    unit: RefreshTokenUnit,
    rawToken: string,
    presented: PresentedToken,
    user: User,
    now: Date,
    origin: RequestOrigin,
  ): Promise<RefreshOutcome> {
    const successor = this.successorOf(rawToken);
    if (!(await unit.advance(presented.token, successor.hash, this.useAt(origin, now)))) {
      // The session is locked (PostgreSQL) or units run alone (SQLite): it cannot have moved.
      throw new Error('Session changed while its token was being rotated');
    }
    return this.rotated(user, presented, successor, now);
  }

  /**
   * The answer to a rotation at `at` that issued `successor`. A derived successor's access token
   * is issued at the rotation's instant with its derived id, so that a retry signs it again to
   * the identical string.
   */
  private rotated(
    user: User,
    presented: PresentedToken,
    successor: Successor,
    at: Date,
  ): RefreshOutcome {
    const issue =
      successor.accessTokenId === undefined ? undefined : { at, id: successor.accessTokenId };
    return {
      grant: {
        user,
        sessionId: presented.session.id,
        refreshToken: successor.raw,
        authMethods: parseAuthMethods(presented.session.authMethods),
        issue,
      },
      event: refreshedEvent(user, presented),
    };
  }

  /** A new token's creation by the request at `origin` at `now`: its session's last use. */
  private useAt(origin: RequestOrigin, now: Date): SessionUse {
    return {
      at: now,
      ip: origin.ip,
      userAgent: origin.userAgent,
      expiresAt: new Date(now.getTime() + this.refreshLifetimeMs),
    };
  }

  private respond(
    user: User,
    sessionId: string,
    refreshToken: string,
    authMethods: readonly AuthMethod[],
    issue?: AccessTokenIssue,
  ): AuthResponseDto {
    const access = this.accessTokens.sign(user, sessionId, authMethods, issue);
    return {
      accessToken: access.token,
      refreshToken,
      accessTokenExpiry: access.expiresAt.toISOString(),
      user: UserResponseDto.from(user),
    };
  }

  private settle(outcome: RefreshOutcome, origin: RequestOrigin): AuthResponseDto {
    if (outcome.grant !== undefined) {
      const { user, sessionId, refreshToken, authMethods, issue } = outcome.grant;
      return this.respond(user, sessionId, refreshToken, authMethods, issue);
    }
    const { event } = outcome;
    if (event.type === 'reuse_detected') {
      this.logger.warn(
        `Refresh token reuse detected for user ${event.userId}: ` +
          // Its session's newest token, if the session had not ended: the line operators know.
          `${event.sessionEnded ? 1 : 0} descendant token(s) revoked`,
        forRequest(origin.requestId),
      );
      throw new UnauthorizedError(TokensMessages.revoked);
    }
    switch (event.reason) {
      case 'invalid':
        throw new UnauthorizedError(TokensMessages.invalid);
      case 'expired':
        throw new UnauthorizedError(TokensMessages.expired);
      case 'deactivated':
        throw new UnauthorizedError(UsersMessages.deactivated);
      case 'unverified':
        throw new UnauthorizedError(UsersMessages.emailNotVerified);
    }
  }
}

function refreshedEvent(
  user: User,
  presented: PresentedToken,
): AuthEvent & { type: 'token_refreshed' } {
  return {
    type: 'token_refreshed',
    userId: user.id,
    familyId: presented.session.id,
    generation: presented.token.generation,
  };
}

/** The `token_refreshed` event's fields known before the rotation; its statement adds the rest. */
const REFRESHED_TEMPLATE: AuthEvent = {
  type: 'token_refreshed',
  userId: '',
  familyId: '',
  generation: 0,
};

/** The `token_revoked` event's fields known before the revocation; its statement adds the rest. */
const REVOKED_TEMPLATE: AuthEvent = {
  type: 'token_revoked',
  userId: '',
  familyId: '',
  generation: 0,
  sessionEnded: false,
  wasRotated: false,
};

/**
 * Presenting it again is reuse: it was rotated (an older generation than its session's), or its
 * session ended (logout, revoke-all, reuse, the cap).
 */
function isRevoked({ token, session }: PresentedToken): boolean {
  return token.generation !== session.generation || session.endedAt !== null;
}

/** Spec §2.2 `IsExpired`, for the newest token of a session: the session's expiry. */
function hasExpired({ session }: PresentedToken, now: Date): boolean {
  return session.expiresAt.getTime() <= now.getTime();
}

function refreshFailed(userId: string | null, reason: RefreshFailureReason): RefreshOutcome {
  return { event: { type: 'refresh_failed', userId, reason } };
}
