import { Controller, Delete, Get, HttpCode, HttpStatus, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RequiresSetting } from '../common/swagger/requires-setting.decorator.js';
import {
  CurrentUser,
  type AccessTokenClaims,
} from '../common/decorators/current-user.decorator.js';
import { Origin } from '../common/decorators/origin.decorator.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { ApiErrorResponses } from '../common/swagger/api-error-responses.decorator.js';
import { IDENTITY_RESPONSE_EXAMPLE, IdentitiesResponseDto } from './dto/identity-response.dto.js';
import { FederationMessages } from './federation.messages.js';
import { FederationService } from './federation.service.js';

/** The identities at other providers linked to the signed-in account. */
@RequiresSetting('Federation__Providers')
@ApiTags('federation')
@Controller('auth/identities')
export class IdentitiesController {
  constructor(private readonly federation: FederationService) {}

  @Get()
  @ApiBearerAuth()
  @ApiOkResponse({
    description: 'The identities linked to the bearer’s account, oldest first.',
    type: IdentitiesResponseDto,
    examples: {
      identities: { summary: 'One identity', value: { identities: [IDENTITY_RESPONSE_EXAMPLE] } },
    },
  })
  @ApiErrorResponses(HttpStatus.UNAUTHORIZED)
  listIdentities(@CurrentUser() user: AccessTokenClaims): Promise<IdentitiesResponseDto> {
    return this.federation.listIdentities(user.sub);
  }

  /** Unlinks one; refused while it is the account's only way to sign in. */
  @Delete(':id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiBearerAuth()
  @ApiNoContentResponse({ description: 'Unlinked.' })
  @ApiErrorResponses(
    HttpStatus.UNAUTHORIZED,
    {
      status: HttpStatus.NOT_FOUND,
      messages: { identityNotFound: FederationMessages.identityNotFound },
    },
    {
      status: HttpStatus.CONFLICT,
      messages: { lastWayToSignIn: FederationMessages.lastWayToSignIn },
    },
  )
  unlinkIdentity(
    @Param('id') id: string,
    @CurrentUser() user: AccessTokenClaims,
    @Origin() origin: RequestOrigin,
  ): Promise<void> {
    return this.federation.unlink(user.sub, id, origin);
  }
}
