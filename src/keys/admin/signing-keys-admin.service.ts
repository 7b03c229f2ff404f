import { Injectable, Logger } from '@nestjs/common';
import type { AdminReasonDto } from '../../common/admin-route/admin-reason.dto.js';
import { adminActorOf, type AdminCall } from '../../common/admin-route/current-admin.decorator.js';
import { forRequest } from '../../logging/log-fields.js';
import type { SigningKeyResponseDto } from '../dto/signing-key-response.dto.js';
import { KeysService } from '../keys.service.js';
import type { AdminSigningKeyListResponseDto } from './dto/admin-signing-key.dto.js';

/** The admin API's side of the signing-key operations: KeysService's, as the CLI's `keys:*`. */
@Injectable()
export class SigningKeysAdminService {
  private readonly logger = new Logger(SigningKeysAdminService.name);

  constructor(private readonly keys: KeysService) {}

  async signingKeys(): Promise<AdminSigningKeyListResponseDto> {
    return { keys: await this.keys.list() };
  }

  async rotateSigningKey(body: AdminReasonDto, call: AdminCall): Promise<SigningKeyResponseDto> {
    const key = await this.keys.rotate(call.origin, adminActorOf(call, body));
    this.logger.log(
      `Admin key ${call.key.name} published signing key ${key.kid} as next`,
      forRequest(call.origin.requestId),
    );
    return key;
  }

  async retireSigningKey(
    kid: string,
    body: AdminReasonDto,
    call: AdminCall,
  ): Promise<SigningKeyResponseDto> {
    const key = await this.keys.retire(kid, call.origin, adminActorOf(call, body));
    this.logger.log(
      `Admin key ${call.key.name} retired signing key ${kid}`,
      forRequest(call.origin.requestId),
    );
    return key;
  }
}
