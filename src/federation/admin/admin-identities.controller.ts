import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RequiresSetting } from '../../common/swagger/requires-setting.decorator.js';
import { AdminReasonDto } from '../../common/admin-route/admin-reason.dto.js';
import { AdminRoute } from '../../common/admin-route/admin-scope.decorator.js';
import {
  CurrentAdminKey,
  type AdminPrincipal,
} from '../../common/admin-route/current-admin.decorator.js';
import { Origin } from '../../common/decorators/origin.decorator.js';
import type { RequestOrigin } from '../../common/request-origin/request-origin.js';
import { AdminChangeResponseDto } from '../../common/admin-route/admin-change-response.dto.js';
import { UsersMessages } from '../../users/users.messages.js';
import { IDENTITY_RESPONSE_EXAMPLE, IdentitiesResponseDto } from '../dto/identity-response.dto.js';
import { FederationMessages } from '../federation.messages.js';
import {
  AdminIdentitiesParamsDto,
  AdminIdentityParamsDto,
} from './dto/admin-identity-params.dto.js';
import { IdentitiesAdminService } from './identities-admin.service.js';

/**
 * The identities at other providers linked to an account, for back offices and support tools;
 * mounted only while federation is configured (docs/federation-operators.md).
 */
@RequiresSetting('Federation__Providers')
@ApiTags('admin')
@Controller('admin/users')
export class AdminIdentitiesController {
  constructor(private readonly identitiesAdmin: IdentitiesAdminService) {}

  /** The account's linked identities, oldest first, as its owner sees them. */
  @Get(':id/identities')
  @AdminRoute('users:read', HttpStatus.BAD_REQUEST, {
    status: HttpStatus.NOT_FOUND,
    messages: { notFound: UsersMessages.notFound },
  })
  @ApiOkResponse({
    description: 'The account’s linked identities, oldest first.',
    type: IdentitiesResponseDto,
    examples: {
      identities: { summary: 'One identity', value: { identities: [IDENTITY_RESPONSE_EXAMPLE] } },
    },
  })
  listUserIdentities(@Param() params: AdminIdentitiesParamsDto): Promise<IdentitiesResponseDto> {
    return this.identitiesAdmin.identities(params.id);
  }

  /** Unlinks one identity of the account, even its last way to sign in; sessions stay. */
  @Delete(':id/identities/:identityId')
  @HttpCode(HttpStatus.OK)
  @AdminRoute('users:write', HttpStatus.BAD_REQUEST, {
    status: HttpStatus.NOT_FOUND,
    messages: {
      notFound: UsersMessages.notFound,
      identityNotFound: FederationMessages.identityNotFound,
    },
  })
  @ApiOkResponse({ type: AdminChangeResponseDto })
  unlinkUserIdentity(
    @Param() params: AdminIdentityParamsDto,
    @Body() body: AdminReasonDto,
    @CurrentAdminKey() key: AdminPrincipal,
    @Origin() origin: RequestOrigin,
  ): Promise<AdminChangeResponseDto> {
    return this.identitiesAdmin.unlinkIdentity(params.id, params.identityId, body, {
      key,
      origin,
    });
  }
}
