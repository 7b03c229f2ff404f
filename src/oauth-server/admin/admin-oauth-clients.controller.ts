import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { AdminScope } from '../../common/admin-route/admin-scope.decorator.js';
import { ADMIN_FORBIDDEN } from '../../common/admin-route/admin-scope.js';
import {
  CurrentAdminKey,
  type AdminPrincipal,
} from '../../common/admin-route/current-admin.decorator.js';
import { Origin } from '../../common/decorators/origin.decorator.js';
import type { RequestOrigin } from '../../common/request-origin/request-origin.js';
import { ApiErrorResponses } from '../../common/swagger/api-error-responses.decorator.js';
import { OAuthServerMessages } from '../oauth-server.messages.js';
import {
  AddedOAuthClientResponseDto,
  AddOAuthClientDto,
  OAuthClientListResponseDto,
  OAuthClientParamsDto,
  RotatedOAuthClientSecretResponseDto,
} from './dto/admin-oauth-client.dto.js';
import { OAuthClientsAdminService } from './oauth-clients-admin.service.js';
import { RequiresSetting } from '../../common/swagger/requires-setting.decorator.js';

const UNKNOWN_CLIENT = {
  status: HttpStatus.NOT_FOUND,
  messages: { unknownClient: OAuthServerMessages.unknownClient },
};

/**
 * The applications registered with the OpenID provider (docs/operations/oauth-server.md): the
 * same OAuthClientsService calls as the CLI's `oauth-clients:*`. Mounted only while
 * OAuthServer__Enabled is true; a secret is shown once, when made.
 */
@RequiresSetting('OAuthServer__Enabled')
@ApiTags('admin')
@Controller('admin/oauth/clients')
export class AdminOAuthClientsController {
  constructor(private readonly adminApi: OAuthClientsAdminService) {}

  /** Every client, without its secret. */
  @Get()
  @AdminScope('oauth-clients:read')
  @ApiErrorResponses(ADMIN_FORBIDDEN)
  listOAuthClients(): Promise<OAuthClientListResponseDto> {
    return this.adminApi.list();
  }

  /** Registers an application; answers its id, and a confidential one's secret, this once. */
  @Post()
  @HttpCode(HttpStatus.CREATED)
  @AdminScope('oauth-clients:write')
  @ApiCreatedResponse({ type: AddedOAuthClientResponseDto })
  @ApiErrorResponses(
    {
      status: HttpStatus.BAD_REQUEST,
      messages: {
        badClientName: OAuthServerMessages.badClientName,
        noRedirectUris: OAuthServerMessages.noRedirectUris,
        tooManyRedirectUris: OAuthServerMessages.tooManyRedirectUris,
        badRedirectUri: OAuthServerMessages.badRedirectUri,
        unknownScopes: OAuthServerMessages.unknownScopes,
      },
    },
    ADMIN_FORBIDDEN,
  )
  addOAuthClient(
    @Body() body: AddOAuthClientDto,
    @CurrentAdminKey() key: AdminPrincipal,
    @Origin() origin: RequestOrigin,
  ): Promise<AddedOAuthClientResponseDto> {
    return this.adminApi.add(body, { key, origin });
  }

  /** Removes a client: it can start no sign-in and its tokens stop working. */
  @Delete(':clientId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @AdminScope('oauth-clients:write')
  @ApiNoContentResponse()
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, ADMIN_FORBIDDEN, UNKNOWN_CLIENT)
  async removeOAuthClient(
    @Param() params: OAuthClientParamsDto,
    @CurrentAdminKey() key: AdminPrincipal,
    @Origin() origin: RequestOrigin,
  ): Promise<void> {
    await this.adminApi.remove(params.clientId, { key, origin });
  }

  /** A new secret for a confidential client, shown this once; the old one stops working. */
  @Post(':clientId/rotate-secret')
  @HttpCode(HttpStatus.OK)
  @AdminScope('oauth-clients:write')
  @ApiOkResponse({ type: RotatedOAuthClientSecretResponseDto })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, ADMIN_FORBIDDEN, UNKNOWN_CLIENT, {
    status: HttpStatus.CONFLICT,
    messages: { publicClientSecret: OAuthServerMessages.publicClientSecret },
  })
  rotateOAuthClientSecret(
    @Param() params: OAuthClientParamsDto,
    @CurrentAdminKey() key: AdminPrincipal,
    @Origin() origin: RequestOrigin,
  ): Promise<RotatedOAuthClientSecretResponseDto> {
    return this.adminApi.rotateSecret(params.clientId, { key, origin });
  }
}
