import { Injectable, Logger } from '@nestjs/common';
import type { AdminCall } from '../../common/admin-route/current-admin.decorator.js';
import { forRequest } from '../../logging/log-fields.js';
import {
  OAuthClientsService,
  type OAuthClientChange,
  type OAuthClientSummary,
} from '../oauth-clients.service.js';
import type {
  AddedOAuthClientResponseDto,
  AddOAuthClientDto,
  OAuthClientListResponseDto,
  OAuthClientResponseDto,
  RotatedOAuthClientSecretResponseDto,
} from './dto/admin-oauth-client.dto.js';

/** The admin API's side of the client operations: OAuthClientsService's, as the CLI's. */
@Injectable()
export class OAuthClientsAdminService {
  private readonly logger = new Logger(OAuthClientsAdminService.name);

  constructor(private readonly clients: OAuthClientsService) {}

  async list(): Promise<OAuthClientListResponseDto> {
    return { clients: (await this.clients.list()).map(clientBody) };
  }

  async add(body: AddOAuthClientDto, call: AdminCall): Promise<AddedOAuthClientResponseDto> {
    const added = await this.clients.add(
      {
        name: body.name,
        redirectUris: body.redirectUris ?? [],
        postLogoutRedirectUris: body.postLogoutRedirectUris,
        isPublic: body.public,
        scopes: body.scopes,
        grantTypes: body.grantTypes,
      },
      changeOf(call),
    );
    this.logger.log(
      `Admin key ${call.key.name} registered OAuth client ${added.clientId}`,
      forRequest(call.origin.requestId),
    );
    return added.clientSecret === null
      ? { clientId: added.clientId }
      : { clientId: added.clientId, clientSecret: added.clientSecret };
  }

  async remove(clientId: string, call: AdminCall): Promise<void> {
    await this.clients.remove(clientId, changeOf(call));
    this.logger.log(
      `Admin key ${call.key.name} removed OAuth client ${clientId}`,
      forRequest(call.origin.requestId),
    );
  }

  async rotateSecret(
    clientId: string,
    call: AdminCall,
  ): Promise<RotatedOAuthClientSecretResponseDto> {
    const rotated = await this.clients.rotateSecret(clientId);
    this.logger.log(
      `Admin key ${call.key.name} rotated the secret of OAuth client ${clientId}`,
      forRequest(call.origin.requestId),
    );
    return rotated;
  }
}

/** The change as the audit trail records it: the request and the key (no reason is asked). */
function changeOf(call: AdminCall): OAuthClientChange {
  return {
    origin: call.origin,
    actor: { adminKeyId: call.key.id, adminKeyName: call.key.name, reason: null },
  };
}

function clientBody(client: OAuthClientSummary): OAuthClientResponseDto {
  return {
    clientId: client.clientId,
    name: client.name,
    redirectUris: [...client.redirectUris],
    postLogoutRedirectUris: [...client.postLogoutRedirectUris],
    public: client.isPublic,
    scopes: [...client.scopes],
    grantTypes: [...client.grantTypes],
    selfRegistered: client.isSelfRegistered,
    createdAt: client.createdAt.toISOString(),
  };
}
