import { Injectable, Logger } from '@nestjs/common';
import { In, Not, type EntityManager } from 'typeorm';
import { UnauthorizedError } from '../common/errors/domain-errors.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/app-config.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { AuthEvent, RefreshFailureReason } from '../events/auth-event.js';
import { AuthEvents } from '../events/auth-events.js';
import { forRequest } from '../logging/log-fields.js';
import { UserResponseDto } from '../users/dto/user-response.dto.js';
import type { User } from '../users/entities/user.entity.js';
import { UsersMessages } from '../users/users.messages.js';
import { UsersService } from '../users/users.service.js';
import { AccessTokenService } from './access-token.service.js';
import {
  parseAuthMethods,
  PASSWORD_ONLY,
  storedAuthMethods,
  type AuthMethod,
} from './auth-methods.js';
import { AuthResponseDto } from './dto/auth-response.dto.js';
import type { MessageResponseDto } from './dto/message-response.dto.js';
import type { RevokeDto } from './dto/revoke.dto.js';
import { activeTokensOf, RefreshToken } from './entities/refresh-token.entity.js';
import { generateRefreshTokenValue, hashRefreshToken } from './refresh-token-value.js';
import {
  familyLockKey,
  revokedColumns,
  SqliteTokenStatements,
  SqliteTokenStore,
  TypeOrmTokenStore,
  type TokenStore,
} from './token-store.js';
import { TokensMessages } from './tokens.messages.js';
import { RandomSource } from '../common/random/random-source.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * What a refresh attempt found, decided inside one unit of work and acted on outside it: the
 * answer, and the event to tell once the unit has committed.
 */
type RefreshOutcome =
  | { readonly response: AuthResponseDto; readonly event: AuthEvent & { type: 'token_refreshed' } }
  | {
      readonly response?: never;
      readonly event: AuthEvent & { type: 'refresh_failed' | 'reuse_detected' };
    };

/** A token issued to start a session, with the family it started. */
export interface IssuedSession {
  readonly response: AuthResponseDto;
  readonly familyId: string;
}

/** What revokeAll ended. */
export interface RevokedSessions {
  /** The tokens it revoked: the newest token of each session. */
  readonly revokedTokenIds: string[];
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
  private sqliteStatements: SqliteTokenStatements | undefined;

  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly usersService: UsersService,
    private readonly accessTokens: AccessTokenService,
    private readonly clock: Clock,
    private readonly random: RandomSource,
    private readonly events: AuthEvents,
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
    const store = new TypeOrmTokenStore(manager, this.unitOfWork, this.usersService);
    const raw = await this.insertToken(store, origin, {
      id: familyId,
      userId: user.id,
      familyId,
      generation: 0,
      authMethods: storedAuthMethods(authMethods),
    });
    await this.endSessionsOverLimit(user.id, origin, manager);
    return { response: this.respond(user, familyId, raw, authMethods), familyId };
  }

  /**
   * Keeps an account at `Sessions__MaxActivePerUser` active sessions: the sessions past it, least
   * recently used first (the session list's order, from its end), are ended with a recorded
   * reason. Called when a session starts, in its transaction; returns the revoked token ids.
   */
  private async endSessionsOverLimit(
    userId: string,
    origin: RequestOrigin,
    manager: EntityManager,
  ): Promise<string[]> {
    // Logins of one account take turns here on PostgreSQL, so each one counts the sessions the
    // others committed and together they never leave more than the limit.
    await this.unitOfWork.lock(manager, `user-sessions:${userId}`);
    const now = this.clock.now();
    const overLimit = await manager.find(RefreshToken, {
      select: { id: true },
      where: activeTokensOf(userId, now),
      order: { createdAt: 'DESC', sessionStartedAt: 'DESC', familyId: 'ASC' },
      skip: this.maxActiveSessions,
      // One session starts at a time, so at most one is over the limit; a bound all the same.
      take: 100,
    });
    const ids = overLimit.map((token) => token.id);
    if (ids.length > 0) {
      await manager.update(
        RefreshToken,
        { id: In(ids), isRevoked: false },
        revokedColumns({ at: now, ip: origin.ip, reason: TokensMessages.sessionLimitReason }),
      );
    }
    return ids;
  }

  /** Spec §3.2: rotates a valid token, or says why not. */
  async refresh(rawToken: string, origin: RequestOrigin): Promise<AuthResponseDto> {
    const tokenHash = hashRefreshToken(rawToken);
    const outcome = await this.withStore(async (store): Promise<RefreshOutcome> => {
      const now = this.clock.now();
      const token = await store.findByHash(tokenHash);
      if (token === null) {
        return refreshFailed(null, 'invalid');
      }
      if (token.isRevoked) {
        const revokedTokenIds = await store.revokeActiveDescendants(token, {
          at: now,
          ip: origin.ip,
          reason: TokensMessages.reuseDetectedReason,
        });
        const { userId, familyId, id: tokenId } = token;
        return { event: { type: 'reuse_detected', userId, familyId, tokenId, revokedTokenIds } };
      }
      if (token.hasExpiredAt(now)) {
        return refreshFailed(token.userId, 'expired');
      }
      const user = await store.findOwner(token.userId);
      if (user === null) {
        return refreshFailed(null, 'invalid');
      }
      if (!user.isActive) {
        return refreshFailed(user.id, 'deactivated');
      }
      // Opt-in: a session of an unverified account cannot be extended, as it could not be opened.
      if (this.requireVerifiedEmail && user.emailVerifiedAt === null) {
        return refreshFailed(user.id, 'unverified');
      }
      return this.rotate(store, token, user, now, origin);
    });
    this.events.emit(outcome.event, origin);
    return this.settle(outcome, origin);
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
    const event = await this.withStore(async (store): Promise<AuthEvent | null> => {
      const token = await store.findByHash(tokenHash);
      if (token === null || token.userId !== userId) {
        return null;
      }
      const revocation = { at: this.clock.now(), ip: origin.ip, reason };
      const revokedItself = await store.revokeIfActive(token.id, revocation);
      const descendants = await store.revokeActiveDescendants(token, revocation);
      const revokedTokenIds = revokedItself ? [token.id, ...descendants] : descendants;
      const { familyId, id: tokenId } = token;
      return { type: 'token_revoked', userId, familyId, tokenId, revokedTokenIds };
    });
    if (event === null) {
      throw new UnauthorizedError(TokensMessages.invalid);
    }
    this.events.emit(event, origin);
    this.logger.log(`Refresh token revoked for user ${userId}`, forRequest(origin.requestId));
    return { message: TokensMessages.revokedOk };
  }

  /**
   * Ends every active session of a user, or every one but `keepFamilyId`. A session is active
   * while its newest token is neither revoked nor expired; expired ones are already over and are
   * left as they are. Not a hot path, so TypeORM on both engines. On PostgreSQL it takes the
   * lock of each family first, so a rotation running meanwhile either commits before (and its new
   * token is revoked here) or starts after (and finds its token revoked).
   */
  async revokeAll(
    userId: string,
    origin: RequestOrigin,
    options: { readonly reason: string; readonly keepFamilyId?: string | null },
  ): Promise<RevokedSessions> {
    const keepFamilyId = options.keepFamilyId ?? null;
    const revoked = await this.unitOfWork.transaction((m) =>
      this.revokeAllWithin(m, userId, origin, { reason: options.reason, keepFamilyId }),
    );
    const { revokedTokenIds } = revoked;
    this.events.emit({ type: 'sessions_revoked', userId, keepFamilyId, revokedTokenIds }, origin);
    return revoked;
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
    const { keepFamilyId } = options;
    const revocation = { at: this.clock.now(), ip: origin.ip, reason: options.reason };
    const where = {
      ...activeTokensOf(userId, revocation.at),
      ...(keepFamilyId === null ? {} : { familyId: Not(keepFamilyId) }),
    };
    const families = new Set(
      (await m.find(RefreshToken, { select: { familyId: true }, where })).map((t) => t.familyId),
    );
    // Sorted, so two calls for one user cannot each hold a lock the other waits for.
    for (const familyId of [...families].sort()) {
      await this.unitOfWork.lock(m, familyLockKey(familyId));
    }
    const tokens = await m.find(RefreshToken, { select: { id: true, familyId: true }, where });
    const ids = tokens.map((t) => t.id);
    if (ids.length > 0) {
      await m.update(RefreshToken, { id: In(ids), isRevoked: false }, revokedColumns(revocation));
    }
    return { revokedTokenIds: ids, sessionIds: [...new Set(tokens.map((t) => t.familyId))] };
  }

  /** The stored token with this raw value, or null. A read, for the rules of other modules. */
  findByValue(rawToken: string): Promise<RefreshToken | null> {
    const tokenHash = hashRefreshToken(rawToken);
    return this.unitOfWork.run((m) => m.findOneBy(RefreshToken, { tokenHash }));
  }

  /**
   * Runs `work` atomically on the token store: prepared statements on SQLite, where refresh is a
   * hot path, and TypeORM on PostgreSQL.
   */
  private withStore<T>(work: (store: TokenStore) => Promise<T>): Promise<T> {
    if (this.unitOfWork.isSerialized) {
      return this.unitOfWork.transactionOnSqlite((db) => {
        this.sqliteStatements ??= new SqliteTokenStatements(db);
        return work(new SqliteTokenStore(this.sqliteStatements));
      });
    }
    return this.unitOfWork.transaction((m) =>
      work(new TypeOrmTokenStore(m, this.unitOfWork, this.usersService)),
    );
  }

  private async rotate(
    store: TokenStore,
    token: RefreshToken,
    user: User,
    now: Date,
    origin: RequestOrigin,
  ): Promise<RefreshOutcome> {
    const id = this.random.uuid();
    const revoked = await store.revokeIfActive(token.id, {
      at: now,
      ip: origin.ip,
      reason: TokensMessages.replacedReason,
      replacedByTokenId: id,
    });
    if (!revoked) {
      // Another writer revoked it between our read and this update: never issue a second child.
      throw new Error('Refresh token changed while it was being rotated');
    }
    const raw = await this.insertToken(store, origin, {
      id,
      userId: user.id,
      familyId: token.familyId,
      generation: token.generation + 1,
      sessionStartedAt: token.sessionStartedAt,
      authMethods: token.authMethods,
    });
    return {
      response: this.respond(user, token.familyId, raw, parseAuthMethods(token.authMethods)),
      event: {
        type: 'token_refreshed',
        userId: user.id,
        familyId: token.familyId,
        tokenId: token.id,
        replacedByTokenId: id,
      },
    };
  }

  /**
   * Writes a new token created by the request at `origin`. Without `sessionStartedAt` it starts
   * a session, now; rotation passes the start of the session it continues.
   */
  private async insertToken(
    store: TokenStore,
    origin: RequestOrigin,
    fields: Pick<RefreshToken, 'id' | 'userId' | 'familyId' | 'generation' | 'authMethods'> &
      Partial<Pick<RefreshToken, 'sessionStartedAt'>>,
  ): Promise<string> {
    const now = this.clock.now();
    const { raw, hash } = generateRefreshTokenValue(this.random);
    await store.insert(
      Object.assign(new RefreshToken(), {
        id: fields.id,
        tokenHash: hash,
        userId: fields.userId,
        familyId: fields.familyId,
        generation: fields.generation,
        createdAt: now,
        createdByIp: origin.ip,
        createdByUserAgent: origin.userAgent,
        sessionStartedAt: fields.sessionStartedAt ?? now,
        expiresAt: new Date(now.getTime() + this.refreshLifetimeMs),
        isRevoked: false,
        revokedAt: null,
        revokedByIp: null,
        reasonRevoked: null,
        replacedByTokenId: null,
        authMethods: fields.authMethods,
      }),
    );
    return raw;
  }

  private respond(
    user: User,
    sessionId: string,
    refreshToken: string,
    authMethods: readonly AuthMethod[],
  ): AuthResponseDto {
    const access = this.accessTokens.sign(user, sessionId, authMethods);
    return {
      accessToken: access.token,
      refreshToken,
      accessTokenExpiry: access.expiresAt.toISOString(),
      user: UserResponseDto.from(user),
    };
  }

  private settle(outcome: RefreshOutcome, origin: RequestOrigin): AuthResponseDto {
    if (outcome.response !== undefined) {
      return outcome.response;
    }
    const { event } = outcome;
    if (event.type === 'reuse_detected') {
      this.logger.warn(
        `Refresh token reuse detected for user ${event.userId}: ` +
          `${event.revokedTokenIds.length} descendant token(s) revoked`,
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

function refreshFailed(userId: string | null, reason: RefreshFailureReason): RefreshOutcome {
  return { event: { type: 'refresh_failed', userId, reason } };
}
