import { Injectable, Logger } from '@nestjs/common';
import type { AdminChangeResponseDto } from '../../common/admin-route/admin-change-response.dto.js';
import type { AdminReasonDto } from '../../common/admin-route/admin-reason.dto.js';
import { adminActorOf, type AdminCall } from '../../common/admin-route/current-admin.decorator.js';
import { NotFoundError } from '../../common/errors/domain-errors.js';
import type { RequestOrigin } from '../../common/request-origin/request-origin.js';
import type { AdminApiActor } from '../../events/auth-event.js';
import { forRequest } from '../../logging/log-fields.js';
import { UsersMessages } from '../../users/users.messages.js';
import { UsersService } from '../../users/users.service.js';
import { IdentityResponseDto, type IdentitiesResponseDto } from '../dto/identity-response.dto.js';
import type { FederatedIdentity } from '../entities/federated-identity.entity.js';
import { LinkedIdentities } from '../linked-identities.js';

/**
 * An operator's view of an account's linked identities, for the admin API
 * (`/api/admin/users/{id}/identities`) and the CLI (`users:identities`, `users:unlink-identity`,
 * which finds the account by e-mail first): the same LinkedIdentities calls as the owner's
 * routes. An operator may remove the last way to sign in (docs/behaviour.md).
 */
@Injectable()
export class IdentitiesAdminService {
  private readonly logger = new Logger(IdentitiesAdminService.name);

  constructor(
    private readonly usersService: UsersService,
    private readonly linked: LinkedIdentities,
  ) {}

  /** The account's identities, oldest first; 404 `Usuario no encontrado.` without the account. */
  async identitiesOf(userId: string): Promise<FederatedIdentity[]> {
    await this.assertAccount(userId);
    return this.linked.listOf(userId);
  }

  /** 404 for an unknown account, then for an identity the account does not have. */
  async unlink(
    userId: string,
    identityId: string,
    origin: RequestOrigin,
    actor?: AdminApiActor,
  ): Promise<FederatedIdentity> {
    await this.assertAccount(userId);
    const identity = await this.linked.unlink(userId, identityId, origin, {
      kind: 'administrator',
      actor,
    });
    this.logger.log(
      `Identity ${identityId} (${identity.provider}) of user ${userId} unlinked by an administrator`,
      forRequest(origin.requestId),
    );
    return identity;
  }

  async identities(userId: string): Promise<IdentitiesResponseDto> {
    const identities = await this.identitiesOf(userId);
    return { identities: identities.map((identity) => IdentityResponseDto.from(identity)) };
  }

  async unlinkIdentity(
    userId: string,
    identityId: string,
    body: AdminReasonDto,
    call: AdminCall,
  ): Promise<AdminChangeResponseDto> {
    await this.unlink(userId, identityId, call.origin, adminActorOf(call, body));
    return { userId, changed: true };
  }

  private async assertAccount(userId: string): Promise<void> {
    if ((await this.usersService.findById(userId)) === null) {
      throw new NotFoundError(UsersMessages.notFound);
    }
  }
}
