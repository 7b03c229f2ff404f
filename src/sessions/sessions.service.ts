import { Injectable, Logger } from '@nestjs/common';
import type { Statement } from 'better-sqlite3';
import { UnauthorizedError } from '../common/errors/domain-errors.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { Clock } from '../common/time/clock.js';
import { fromSqliteDatetime } from '../database/sqlite-datetime.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { forRequest } from '../logging/log-fields.js';
import { activeTokensOf, RefreshToken } from '../tokens/entities/refresh-token.entity.js';
import { TokensMessages } from '../tokens/tokens.messages.js';
import { TokensService } from '../tokens/tokens.service.js';
import type { RevokeAllSessionsDto } from './dto/revoke-all-sessions.dto.js';
import type { RevokedSessionsResponseDto } from './dto/revoked-sessions-response.dto.js';
import type { SessionListResponseDto } from './dto/session-list-response.dto.js';
import { SessionResponseDto } from './dto/session-response.dto.js';
import { SessionsMessages } from './sessions.messages.js';

/**
 * A user's sessions. A session is a token family: the chain of refresh tokens that rotation makes
 * from one login or registration, and the family id is the session id. It is active while its
 * newest token is neither revoked nor expired. Rotation revokes a token in the transaction that
 * issues its replacement, so a family never has more than one unrevoked token, and that one is
 * its newest: each unrevoked, unexpired token is exactly one active session.
 */
@Injectable()
export class SessionsService {
  private readonly logger = new Logger(SessionsService.name);
  private selectNewestOfFamily: Statement<[string], NewestTokenRow> | undefined;

  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly tokensService: TokensService,
    private readonly clock: Clock,
  ) {}

  /**
   * The active sessions of `userId`, most recently used first. The session whose newest token is
   * `namedRefreshToken` is marked current; a token that is unknown, another user's, or no longer
   * the newest of an active session marks none, so the answer tells nothing about it.
   */
  async list(userId: string, namedRefreshToken: string | null): Promise<SessionListResponseDto> {
    const tokens = await this.activeSessionTokens(userId);
    const named =
      namedRefreshToken === null ? null : await this.tokensService.findByValue(namedRefreshToken);
    // Only the bearer's active tokens are listed, so an id match is the whole check.
    return {
      sessions: tokens.map((token) => SessionResponseDto.from(token, token.id === named?.id)),
    };
  }

  /**
   * Whether `sessionId` is a session of `userId` that is still active: neither logged out,
   * revoked with all the others, ended by reuse detection or deactivation, nor expired. False for
   * a session that does not exist (any more).
   */
  async isActive(userId: string, sessionId: string): Promise<boolean> {
    const newest = await this.newestTokenOf(sessionId);
    return newest !== null && newest.userId === userId && newest.isActiveAt(this.clock.now());
  }

  /**
   * Revokes every active session of `userId`; with `keepCurrent`, all but the session of
   * `refreshToken`, which must then be an active token of the user.
   */
  async revokeAll(
    userId: string,
    request: RevokeAllSessionsDto,
    origin: RequestOrigin,
  ): Promise<RevokedSessionsResponseDto> {
    const keepFamilyId =
      request.keepCurrent === true ? await this.sessionToKeep(userId, request.refreshToken) : null;
    const { sessionIds } = await this.tokensService.revokeAll(userId, origin, {
      reason: SessionsMessages.revokeAllReason,
      keepFamilyId,
    });
    this.logger.log(
      `${sessionIds.length} session(s) revoked for user ${userId}`,
      forRequest(origin.requestId),
    );
    return { message: SessionsMessages.revokedAll, revokedSessions: sessionIds.length };
  }

  /**
   * The session to spare. A missing, unknown, revoked or expired token, or another user's, is
   * refused with one message, so the answer does not tell them apart.
   */
  private async sessionToKeep(userId: string, refreshToken: unknown): Promise<string> {
    // The DTO lets `null` through as "absent", like every optional field.
    const token =
      typeof refreshToken === 'string' ? await this.tokensService.findByValue(refreshToken) : null;
    if (token === null || token.userId !== userId || !token.isActiveAt(this.clock.now())) {
      throw new UnauthorizedError(TokensMessages.invalid);
    }
    return token.familyId;
  }

  /**
   * The newest token of a family, which alone can be active (rotation revokes a token as it
   * issues its successor). It runs on every protected request when Jwt__RequireActiveSession is
   * on, so it is one prepared statement on SQLite and one round trip on PostgreSQL.
   */
  private async newestTokenOf(
    familyId: string,
  ): Promise<Pick<RefreshToken, 'userId' | 'isActiveAt'> | null> {
    const row = this.unitOfWork.isSerialized
      ? await this.unitOfWork.runOnSqlite((db) => {
          this.selectNewestOfFamily ??= db.prepare<[string], NewestTokenRow>(
            NEWEST_TOKEN_OF_FAMILY.replace('$1', '?'),
          );
          return this.selectNewestOfFamily.get(familyId);
        })
      : (
          await this.unitOfWork.run((m) =>
            m.query<NewestTokenRow[]>(NEWEST_TOKEN_OF_FAMILY, [familyId]),
          )
        )[0];
    return row === undefined
      ? null
      : Object.assign(new RefreshToken(), {
          userId: row.userId,
          isRevoked: row.isRevoked === true || row.isRevoked === 1,
          expiresAt:
            row.expiresAt instanceof Date ? row.expiresAt : fromSqliteDatetime(row.expiresAt),
        });
  }

  private activeSessionTokens(userId: string): Promise<RefreshToken[]> {
    return this.unitOfWork.run((m) =>
      m.find(RefreshToken, {
        select: {
          id: true,
          familyId: true,
          createdAt: true,
          createdByIp: true,
          createdByUserAgent: true,
          sessionStartedAt: true,
        },
        where: activeTokensOf(userId, this.clock.now()),
        // Ties (one instant) fall back to the newer session, then the id, so the order is stable.
        order: { createdAt: 'DESC', sessionStartedAt: 'DESC', familyId: 'ASC' },
      }),
    );
  }
}

/**
 * A family's newest token: one seek to the end of the family's range in IDX_refresh_tokens_family
 * (familyId, generation), however many generations it has (test/active-session.e2e-spec.ts reads
 * the plan on both engines).
 */
export const NEWEST_TOKEN_OF_FAMILY =
  'SELECT "userId", "isRevoked", "expiresAt" FROM "refresh_tokens" WHERE "familyId" = $1 ' +
  'ORDER BY "generation" DESC LIMIT 1';

/** A row of NEWEST_TOKEN_OF_FAMILY: SQLite gives 0/1 and UTC text, PostgreSQL a boolean and a Date. */
interface NewestTokenRow {
  readonly userId: string;
  readonly isRevoked: number | boolean;
  readonly expiresAt: string | Date;
}
