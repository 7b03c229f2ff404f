import { Body, Controller, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AdminPrincipal } from '../../common/admin-route/current-admin.decorator.js';
import { Origin } from '../../common/decorators/origin.decorator.js';
import type { RequestOrigin } from '../../common/request-origin/request-origin.js';
import { SigningKeyResponseDto } from '../dto/signing-key-response.dto.js';
import { KeysMessages } from '../keys.messages.js';
import { SigningKeysAdminService } from './signing-keys-admin.service.js';
import { AdminRoute } from '../../common/admin-route/admin-scope.decorator.js';
import { CurrentAdminKey } from '../../common/admin-route/current-admin.decorator.js';
import { AdminReasonDto } from '../../common/admin-route/admin-reason.dto.js';
import {
  AdminSigningKeyListResponseDto,
  AdminSigningKeyParamsDto,
} from './dto/admin-signing-key.dto.js';

/**
 * The signing key set (docs/operations/signing-keys.md): the same KeysService calls as the CLI's
 * `keys:list`, `keys:rotate` and `keys:retire`. Only kid, algorithm, state and instants are shown.
 */
@ApiTags('admin')
@Controller('admin/keys')
export class AdminSigningKeysController {
  constructor(private readonly adminApi: SigningKeysAdminService) {}

  /** Every key with its state now, the configuration's HS256 secrets included. */
  @Get()
  @AdminRoute('keys:read')
  listSigningKeys(): Promise<AdminSigningKeyListResponseDto> {
    return this.adminApi.signingKeys();
  }

  /** Makes a key and publishes it as next: it signs once every verifier can have read it. */
  @Post('rotate')
  @HttpCode(HttpStatus.CREATED)
  @AdminRoute(
    'keys:write',
    {
      status: HttpStatus.BAD_REQUEST,
      messages: { symmetricAlgorithm: KeysMessages.symmetricAlgorithm },
    },
    {
      status: HttpStatus.CONFLICT,
      messages: {
        nextKeyWaiting: KeysMessages.nextKeyWaiting,
        alreadyExists: KeysMessages.alreadyExists,
      },
    },
  )
  @ApiCreatedResponse({ type: SigningKeyResponseDto })
  rotateSigningKey(
    @Body() body: AdminReasonDto,
    @CurrentAdminKey() key: AdminPrincipal,
    @Origin() origin: RequestOrigin,
  ): Promise<SigningKeyResponseDto> {
    return this.adminApi.rotateSigningKey(body, { key, origin });
  }

  /** Retires a key at once: the tokens it signed stop verifying; a current key is replaced. */
  @Post(':kid/retire')
  @HttpCode(HttpStatus.OK)
  @AdminRoute(
    'keys:write',
    HttpStatus.BAD_REQUEST,
    { status: HttpStatus.NOT_FOUND, messages: { notFound: KeysMessages.notFound } },
    {
      status: HttpStatus.CONFLICT,
      messages: {
        alreadyRetired: KeysMessages.alreadyRetired,
        secretSigns: KeysMessages.secretSigns,
      },
    },
  )
  @ApiOkResponse({ type: SigningKeyResponseDto })
  retireSigningKey(
    @Param() params: AdminSigningKeyParamsDto,
    @Body() body: AdminReasonDto,
    @CurrentAdminKey() key: AdminPrincipal,
    @Origin() origin: RequestOrigin,
  ): Promise<SigningKeyResponseDto> {
    return this.adminApi.retireSigningKey(params.kid, body, { key, origin });
  }
}
