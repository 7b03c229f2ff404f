import { Body, Controller, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Origin } from '../common/decorators/origin.decorator.js';
import {
  CurrentUser,
  type AccessTokenClaims,
} from '../common/decorators/current-user.decorator.js';
import { Public } from '../common/decorators/public.decorator.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { ApiErrorResponses } from '../common/swagger/api-error-responses.decorator.js';
import { UsersMessages } from '../users/users.messages.js';
import { AUTH_RESPONSE_EXAMPLE, AuthResponseDto } from './dto/auth-response.dto.js';
import { MessageResponseDto } from './dto/message-response.dto.js';
import { RefreshDto } from './dto/refresh.dto.js';
import { RevokeDto } from './dto/revoke.dto.js';
import { TokensMessages } from './tokens.messages.js';
import { TokensService } from './tokens.service.js';

@ApiTags('auth')
@Controller('auth')
export class TokensController {
  constructor(private readonly tokensService: TokensService) {}

  /** Exchanges a refresh token for a new pair; the presented token is revoked. */
  @Public()
  @Post('refresh')
  @HttpCode(HttpStatus.OK)
  @ApiOkResponse({
    description:
      'Rotated: a new token pair for the same session. The presented refresh token is now revoked.',
    type: AuthResponseDto,
    examples: { rotated: { summary: 'The next pair', value: AUTH_RESPONSE_EXAMPLE } },
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, {
    status: HttpStatus.UNAUTHORIZED,
    messages: {
      invalid: TokensMessages.invalid,
      revoked: TokensMessages.revoked,
      expired: TokensMessages.expired,
      deactivated: UsersMessages.deactivated,
      emailNotVerified: UsersMessages.emailNotVerified,
    },
  })
  refresh(@Body() body: RefreshDto, @Origin() origin: RequestOrigin): Promise<AuthResponseDto> {
    return this.tokensService.refresh(body.refreshToken, origin);
  }

  /** Revokes one of the bearer's refresh tokens (logout). */
  @Post('revoke')
  @HttpCode(HttpStatus.OK)
  @ApiBearerAuth()
  @ApiOkResponse({
    description: 'Revoked: the refresh token, and its session, can no longer be used.',
    type: MessageResponseDto,
    examples: {
      revoked: { summary: TokensMessages.revokedOk, value: { message: TokensMessages.revokedOk } },
    },
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, {
    status: HttpStatus.UNAUTHORIZED,
    messages: { invalid: TokensMessages.invalid },
  })
  revoke(
    @Body() body: RevokeDto,
    @CurrentUser() user: AccessTokenClaims,
    @Origin() origin: RequestOrigin,
  ): Promise<MessageResponseDto> {
    return this.tokensService.revoke(user.sub, body, origin);
  }
}
