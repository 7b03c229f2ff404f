import { Controller, Delete, Get, HttpCode, HttpStatus, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import {
  CurrentUser,
  type AccessTokenClaims,
} from '../../common/decorators/current-user.decorator.js';
import { Origin } from '../../common/decorators/origin.decorator.js';
import type { RequestOrigin } from '../../common/request-origin/request-origin.js';
import { ApiErrorResponses } from '../../common/swagger/api-error-responses.decorator.js';
import { OAuthServerMessages } from '../oauth-server.messages.js';
import { OAuthGrantsResponseDto } from './dto/oauth-grant-response.dto.js';
import { OAuthGrantsService } from './oauth-grants.service.js';

/**
 * The applications the signed-in account gave consent to through the OpenID provider. Keygate's
 * own access tokens only: a token the provider issued to an application is not one.
 */
@ApiTags('oauth')
@Controller('auth/oauth/grants')
export class OAuthGrantsController {
  constructor(private readonly grants: OAuthGrantsService) {}

  @Get()
  @ApiBearerAuth()
  @ApiOkResponse({ type: OAuthGrantsResponseDto })
  @ApiErrorResponses(HttpStatus.UNAUTHORIZED)
  listOAuthGrants(@CurrentUser() user: AccessTokenClaims): Promise<OAuthGrantsResponseDto> {
    return this.grants.list(user.sub);
  }

  /** Withdraws the consent given to the application and ends its codes and tokens. */
  @Delete(':clientId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiBearerAuth()
  @ApiNoContentResponse({ description: 'Withdrawn.' })
  @ApiErrorResponses(HttpStatus.UNAUTHORIZED, {
    status: HttpStatus.NOT_FOUND,
    messages: { grantNotFound: OAuthServerMessages.grantNotFound },
  })
  withdrawOAuthGrant(
    @Param('clientId') clientId: string,
    @CurrentUser() user: AccessTokenClaims,
    @Origin() origin: RequestOrigin,
  ): Promise<void> {
    return this.grants.withdraw(user.sub, clientId, origin);
  }
}
