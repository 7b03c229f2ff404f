import { Injectable, Logger } from '@nestjs/common';
import { UnauthorizedError } from '../common/errors/domain-errors.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { Clock } from '../common/time/clock.js';
import { forRequest } from '../logging/log-fields.js';
import { TokensMessages } from '../tokens/tokens.messages.js';
import { TokensService } from '../tokens/tokens.service.js';
import type { RevokeAllSessionsDto } from './dto/revoke-all-sessions.dto.js';
import type { RevokedSessionsResponseDto } from './dto/revoked-sessions-response.dto.js';
import type { SessionListResponseDto } from './dto/session-list-response.dto.js';
import { SessionResponseDto } from './dto/session-response.dto.js';
import { SessionsMessages } from './sessions.messages.js';

/**
 * A user's sessions. A session is what one login or registration started: a row of `sessions`
 * (decision 0027) and the chain of refresh tokens that rotation makes from it; its id is the
 * family id. It is active while it has neither ended nor expired; only its newest token is.
 */
@Injectable()
export class SessionsService {
  private readonly logger = new Logger(SessionsService.name);

  constructor(
    private readonly tokensService: TokensService,
    private readonly clock: Clock,
  ) {}

  /**
   * The active sessions of `userId`, most recently used first. The session whose newest token is
   * `namedRefreshToken` is marked current; a token that is unknown, another user's, or no longer
   * the newest of an active session marks none, so the answer tells nothing about it.
   */
  async list(userId: string, namedRefreshToken: string | null): Promise<SessionListResponseDto> {
    const sessions = await this.tokensService.activeSessions(userId);
    const named =
      namedRefreshToken === null
        ? null
        : await this.tokensService.activeSessionOf(namedRefreshToken);
    // Only the bearer's active sessions are listed, and `named` is the session of which the token
    // is the newest, so an id match is the whole check.
    return {
      sessions: sessions.map((session) =>
        SessionResponseDto.from(session, session.id === named?.id),
      ),
    };
  }

  /**
   * Whether `sessionId` is a session of `userId` that is still active: neither logged out,
   * revoked with all the others, ended by reuse detection or deactivation, nor expired. False for
   * a session that does not exist (any more).
   */
  async isActive(userId: string, sessionId: string): Promise<boolean> {
    // Runs on every protected request when Jwt__RequireActiveSession is on: one indexed read.
    const session = await this.tokensService.findSession(sessionId);
    return session !== null && session.userId === userId && session.isActiveAt(this.clock.now());
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
    const session =
      typeof refreshToken === 'string'
        ? await this.tokensService.activeSessionOf(refreshToken)
        : null;
    if (session === null || session.userId !== userId) {
      throw new UnauthorizedError(TokensMessages.invalid);
    }
    return session.id;
  }
}
