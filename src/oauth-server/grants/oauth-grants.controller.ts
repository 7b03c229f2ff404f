import { Controller, Delete, Get, HttpCode, HttpStatus, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import {
  CurrentUser,
  type AccessTokenClaims,
} from '../../common/decorators/current-user.decorator.js';
import { Origin } from '../../common/decorators/origin.decorator.js';
import type { RequestOrigin } from '../../common/request-origin/request-origin.js';
import { ApiErrorResponses } from '../../common/swagger/api-error-responses.decorator.js';
import {
  OAuthGrantListResponseDto,
  OAUTH_GRANT_RESPONSE_EXAMPLE,
} from './dto/oauth-grant-response.dto.js';
import { OAuthServerMessages } from '../oauth-server.messages.js';
import { OAuthGrantsService } from './oauth-grants.service.js';
import { RequiresSetting } from '../../common/swagger/requires-setting.decorator.js';

/** The applications a person let sign them in (mounted only when OAuthServer__Enabled). */
@RequiresSetting('OAuthServer__Enabled')
@ApiTags('auth')
@ApiBearerAuth()
@Controller('auth/oauth/grants')
export class OAuthGrantsController {
  constructor(private readonly grants: OAuthGrantsService) {}

  /** The bearer's consents to applications, newest first. */
  @Get()
  @ApiOkResponse({
    description: 'The applications the bearer consented to, newest first.',
    type: OAuthGrantListResponseDto,
    examples: {
      grants: { summary: 'One application', value: { grants: [OAUTH_GRANT_RESPONSE_EXAMPLE] } },
    },
  })
  @ApiErrorResponses(HttpStatus.UNAUTHORIZED)
  listOAuthGrants(@CurrentUser() user: AccessTokenClaims): Promise<OAuthGrantListResponseDto> {
    return this.grants.list(user.sub);
  }

  /** Withdraws the bearer's consent to the application and ends every token it was given. */
  @Delete(':clientId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiNoContentResponse({ description: 'Withdrawn; the application’s tokens no longer work.' })
  @ApiErrorResponses(HttpStatus.UNAUTHORIZED, {
    status: HttpStatus.NOT_FOUND,
    messages: { unknownGrant: OAuthServerMessages.unknownGrant },
  })
  withdrawOAuthGrant(
    @CurrentUser() user: AccessTokenClaims,
    @Param('clientId') clientId: string,
    @Origin() origin: RequestOrigin,
  ): Promise<void> {
    return this.grants.withdraw(user.sub, clientId, origin);
  }
}
