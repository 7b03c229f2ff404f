import { Body, Controller, Get, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import {
  CurrentUser,
  type AccessTokenClaims,
} from '../common/decorators/current-user.decorator.js';
import { Origin } from '../common/decorators/origin.decorator.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { ApiErrorResponses } from '../common/swagger/api-error-responses.decorator.js';
import { RevokeAllSessionsDto } from './dto/revoke-all-sessions.dto.js';
import { RevokedSessionsResponseDto } from './dto/revoked-sessions-response.dto.js';
import { SESSION_LIST_EXAMPLE, SessionListResponseDto } from './dto/session-list-response.dto.js';
import { NamedRefreshToken, REFRESH_TOKEN_HEADER } from './named-refresh-token.decorator.js';
import { SessionsMessages } from './sessions.messages.js';
import { SessionsService } from './sessions.service.js';
import { TokensMessages } from '../tokens/tokens.messages.js';

@ApiTags('auth')
@ApiBearerAuth()
@Controller('auth/sessions')
export class SessionsController {
  constructor(private readonly sessionsService: SessionsService) {}

  /** The bearer's active sessions, most recently used first. */
  @Get()
  @ApiOkResponse({
    description: "The bearer's active sessions, most recently used first; empty when none is left.",
    type: SessionListResponseDto,
    examples: { sessions: { summary: 'Two sessions', value: SESSION_LIST_EXAMPLE } },
  })
  @ApiHeader({
    name: REFRESH_TOKEN_HEADER,
    required: false,
    description:
      "The client's current refresh token: its session is marked `current`. A token that is " +
      'not an active token of the bearer marks nothing.',
  })
  @ApiErrorResponses(HttpStatus.UNAUTHORIZED)
  listSessions(
    @CurrentUser() user: AccessTokenClaims,
    @NamedRefreshToken() refreshToken: string | null,
  ): Promise<SessionListResponseDto> {
    return this.sessionsService.list(user.sub, refreshToken);
  }

  /** Revokes every active session of the bearer, or every one but the current session. */
  @Post('revoke-all')
  @HttpCode(HttpStatus.OK)
  @ApiOkResponse({
    description: 'The sessions were ended; `revokedSessions` says how many (0 when none was left).',
    type: RevokedSessionsResponseDto,
    examples: {
      revokedAll: {
        summary: SessionsMessages.revokedAll,
        value: { message: SessionsMessages.revokedAll, revokedSessions: 2 },
      },
    },
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, {
    status: HttpStatus.UNAUTHORIZED,
    messages: { invalid: TokensMessages.invalid },
  })
  revokeAllSessions(
    @Body() body: RevokeAllSessionsDto,
    @CurrentUser() user: AccessTokenClaims,
    @Origin() origin: RequestOrigin,
  ): Promise<RevokedSessionsResponseDto> {
    return this.sessionsService.revokeAll(user.sub, body, origin);
  }
}
