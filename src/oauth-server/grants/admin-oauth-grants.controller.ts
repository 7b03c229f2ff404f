import { Controller, Get, HttpStatus, Param } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { AdminRoute } from '../../common/admin-route/admin-scope.decorator.js';
import { UsersMessages } from '../../users/users.messages.js';
import { OAuthGrantAccountParamsDto } from './dto/account-params.dto.js';
import { OAuthGrantListResponseDto } from './dto/oauth-grant-response.dto.js';
import { OAuthGrantsService } from './oauth-grants.service.js';
import { RequiresSetting } from '../../common/swagger/requires-setting.decorator.js';

const UNKNOWN_USER = {
  status: HttpStatus.NOT_FOUND,
  messages: { notFound: UsersMessages.notFound },
};

/**
 * An account's consents to applications, beside the other account routes of the admin API
 * (docs/operations/admin-api.md). Mounted only while OAuthServer__Enabled is true.
 */
@RequiresSetting('OAuthServer__Enabled')
@ApiTags('admin')
@Controller('admin/users')
export class AdminOAuthGrantsController {
  constructor(private readonly grants: OAuthGrantsService) {}

  /** The applications the account gave consent to, with the scopes each covers. */
  @Get(':id/oauth-grants')
  @AdminRoute('users:read', HttpStatus.BAD_REQUEST, UNKNOWN_USER)
  @ApiOkResponse({ type: OAuthGrantListResponseDto })
  listUserOAuthGrants(
    @Param() params: OAuthGrantAccountParamsDto,
  ): Promise<OAuthGrantListResponseDto> {
    return this.grants.listForAdmin(params.id);
  }
}
