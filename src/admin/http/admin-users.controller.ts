import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  Post,
  Query,
} from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { AdminApiMessages } from '../admin-api.messages.js';
import { Origin } from '../../common/decorators/origin.decorator.js';
import type { RequestOrigin } from '../../common/request-origin/request-origin.js';
import { MailMessages } from '../../mail/mail.messages.js';
import { UsersMessages } from '../../users/users.messages.js';
import { AdminApiService } from './admin-api.service.js';
import type { AdminPrincipal } from '../../common/admin-route/current-admin.decorator.js';
import { AdminRoute } from '../../common/admin-route/admin-scope.decorator.js';
import { CurrentAdminKey } from '../../common/admin-route/current-admin.decorator.js';
import { AdminChangeResponseDto } from '../../common/admin-route/admin-change-response.dto.js';
import { AdminReasonDto } from '../../common/admin-route/admin-reason.dto.js';
import { AdminSessionParamsDto, AdminUserParamsDto } from './dto/admin-user-params.dto.js';
import {
  AdminUserDetailsResponseDto,
  AdminUserListResponseDto,
} from './dto/admin-user-response.dto.js';
import { AdminSessionListResponseDto } from './dto/admin-session-response.dto.js';
import { ListUsersQueryDto } from './dto/list-users-query.dto.js';

const UNKNOWN_USER = {
  status: HttpStatus.NOT_FOUND,
  messages: { notFound: UsersMessages.notFound },
};

/** Accounts and their sessions, for back offices and support tools (docs/operations/admin-api.md). */
@ApiTags('admin')
@Controller('admin/users')
export class AdminUsersController {
  constructor(private readonly adminApi: AdminApiService) {}

  /** Accounts by exact e-mail, e-mail prefix and state, a page at a time in a stable order. */
  @Get()
  @AdminRoute('users:read', HttpStatus.BAD_REQUEST)
  listUsers(@Query() query: ListUsersQueryDto): Promise<AdminUserListResponseDto> {
    return this.adminApi.listUsers(query);
  }

  /** One account: its state, lockout, second factors, session count and last login. */
  @Get(':id')
  @AdminRoute('users:read', HttpStatus.BAD_REQUEST, UNKNOWN_USER)
  getUser(@Param() params: AdminUserParamsDto): Promise<AdminUserDetailsResponseDto> {
    return this.adminApi.user(params.id);
  }

  /** Deactivates the account and ends every session of it. */
  @Post(':id/deactivate')
  @HttpCode(HttpStatus.OK)
  @AdminRoute('users:write', HttpStatus.BAD_REQUEST, UNKNOWN_USER)
  @ApiOkResponse({ type: AdminChangeResponseDto })
  deactivateUser(
    @Param() params: AdminUserParamsDto,
    @Body() body: AdminReasonDto,
    @CurrentAdminKey() key: AdminPrincipal,
    @Origin() origin: RequestOrigin,
  ): Promise<AdminChangeResponseDto> {
    return this.adminApi.deactivate(params.id, body, { key, origin });
  }

  /** Activates the account again. */
  @Post(':id/activate')
  @HttpCode(HttpStatus.OK)
  @AdminRoute('users:write', HttpStatus.BAD_REQUEST, UNKNOWN_USER)
  @ApiOkResponse({ type: AdminChangeResponseDto })
  activateUser(
    @Param() params: AdminUserParamsDto,
    @Body() body: AdminReasonDto,
    @CurrentAdminKey() key: AdminPrincipal,
    @Origin() origin: RequestOrigin,
  ): Promise<AdminChangeResponseDto> {
    return this.adminApi.activate(params.id, body, { key, origin });
  }

  /** Clears the failed-login counter and any lockout. */
  @Post(':id/unlock')
  @HttpCode(HttpStatus.OK)
  @AdminRoute('users:write', HttpStatus.BAD_REQUEST, UNKNOWN_USER)
  @ApiOkResponse({ type: AdminChangeResponseDto })
  unlockUser(
    @Param() params: AdminUserParamsDto,
    @Body() body: AdminReasonDto,
    @CurrentAdminKey() key: AdminPrincipal,
    @Origin() origin: RequestOrigin,
  ): Promise<AdminChangeResponseDto> {
    return this.adminApi.unlock(params.id, body, { key, origin });
  }

  /** Ends every session of the account. */
  @Post(':id/logout')
  @HttpCode(HttpStatus.OK)
  @AdminRoute('sessions:write', HttpStatus.BAD_REQUEST, UNKNOWN_USER)
  @ApiOkResponse({ type: AdminChangeResponseDto })
  logoutUser(
    @Param() params: AdminUserParamsDto,
    @Body() body: AdminReasonDto,
    @CurrentAdminKey() key: AdminPrincipal,
    @Origin() origin: RequestOrigin,
  ): Promise<AdminChangeResponseDto> {
    return this.adminApi.logout(params.id, body, { key, origin });
  }

  /** Removes the second factor and recovery codes (a lost device); sessions stay. */
  @Post(':id/mfa-reset')
  @HttpCode(HttpStatus.OK)
  @AdminRoute('users:write', HttpStatus.BAD_REQUEST, UNKNOWN_USER)
  @ApiOkResponse({ type: AdminChangeResponseDto })
  resetUserMfa(
    @Param() params: AdminUserParamsDto,
    @Body() body: AdminReasonDto,
    @CurrentAdminKey() key: AdminPrincipal,
    @Origin() origin: RequestOrigin,
  ): Promise<AdminChangeResponseDto> {
    return this.adminApi.resetMfa(params.id, body, { key, origin });
  }

  /** Removes every passkey of the account (lost or stolen devices); sessions stay. */
  @Post(':id/passkeys-remove')
  @HttpCode(HttpStatus.OK)
  @AdminRoute('users:write', HttpStatus.BAD_REQUEST, UNKNOWN_USER)
  @ApiOkResponse({ type: AdminChangeResponseDto })
  removeUserPasskeys(
    @Param() params: AdminUserParamsDto,
    @Body() body: AdminReasonDto,
    @CurrentAdminKey() key: AdminPrincipal,
    @Origin() origin: RequestOrigin,
  ): Promise<AdminChangeResponseDto> {
    return this.adminApi.removePasskeys(params.id, body, { key, origin });
  }

  /** Marks the account's current e-mail verified. */
  @Post(':id/verify-email')
  @HttpCode(HttpStatus.OK)
  @AdminRoute('users:write', HttpStatus.BAD_REQUEST, UNKNOWN_USER)
  @ApiOkResponse({ type: AdminChangeResponseDto })
  verifyUserEmail(
    @Param() params: AdminUserParamsDto,
    @Body() body: AdminReasonDto,
    @CurrentAdminKey() key: AdminPrincipal,
    @Origin() origin: RequestOrigin,
  ): Promise<AdminChangeResponseDto> {
    return this.adminApi.verifyEmail(params.id, body, { key, origin });
  }

  /** Queues a password-reset mail to the account's address, as `password/forgot` would. */
  @Post(':id/password-reset-mail')
  @HttpCode(HttpStatus.ACCEPTED)
  @AdminRoute('users:write', HttpStatus.BAD_REQUEST, UNKNOWN_USER, {
    status: HttpStatus.SERVICE_UNAVAILABLE,
    messages: { mailUnavailable: MailMessages.unavailable },
  })
  @ApiAcceptedResponse({ type: AdminChangeResponseDto })
  sendUserPasswordResetMail(
    @Param() params: AdminUserParamsDto,
    @Body() body: AdminReasonDto,
    @CurrentAdminKey() key: AdminPrincipal,
    @Origin() origin: RequestOrigin,
  ): Promise<AdminChangeResponseDto> {
    return this.adminApi.sendPasswordResetMail(params.id, body, { key, origin });
  }

  /** Deletes the account, its sessions, tokens and unsent mail; its audit rows stay. */
  @Delete(':id')
  @HttpCode(HttpStatus.OK)
  @AdminRoute('users:write', HttpStatus.BAD_REQUEST, UNKNOWN_USER)
  @ApiOkResponse({ type: AdminChangeResponseDto })
  deleteUser(
    @Param() params: AdminUserParamsDto,
    @Body() body: AdminReasonDto,
    @CurrentAdminKey() key: AdminPrincipal,
    @Origin() origin: RequestOrigin,
  ): Promise<AdminChangeResponseDto> {
    return this.adminApi.deleteUser(params.id, body, { key, origin });
  }

  /** The account's active sessions, most recently used first. */
  @Get(':id/sessions')
  @AdminRoute('users:read', HttpStatus.BAD_REQUEST, UNKNOWN_USER)
  listUserSessions(@Param() params: AdminUserParamsDto): Promise<AdminSessionListResponseDto> {
    return this.adminApi.sessions(params.id);
  }

  /** Ends one session of the account. */
  @Delete(':id/sessions/:sessionId')
  @HttpCode(HttpStatus.OK)
  @AdminRoute('sessions:write', HttpStatus.BAD_REQUEST, {
    status: HttpStatus.NOT_FOUND,
    messages: {
      notFound: UsersMessages.notFound,
      sessionNotFound: AdminApiMessages.sessionNotFound,
    },
  })
  @ApiOkResponse({ type: AdminChangeResponseDto })
  endUserSession(
    @Param() params: AdminSessionParamsDto,
    @Body() body: AdminReasonDto,
    @CurrentAdminKey() key: AdminPrincipal,
    @Origin() origin: RequestOrigin,
  ): Promise<AdminChangeResponseDto> {
    return this.adminApi.endSession(params.id, params.sessionId, body, { key, origin });
  }
}
