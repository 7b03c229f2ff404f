import { Injectable, Logger } from '@nestjs/common';
import type { AdminReasonDto } from '../../common/admin-route/admin-reason.dto.js';
import { adminActorOf, type AdminCall } from '../../common/admin-route/current-admin.decorator.js';
import type { RequestOrigin } from '../../common/request-origin/request-origin.js';
import type { AdminApiActor } from '../../events/auth-event.js';
import { forRequest } from '../../logging/log-fields.js';
import { AdminService, type Account, type AccountRef } from '../../admin/admin.service.js';
import type { AdminChangeResponseDto } from '../../admin/http/dto/admin-change-response.dto.js';
import { IdentityResponseDto, type IdentitiesResponseDto } from '../dto/identity-response.dto.js';
import type { FederatedIdentity } from '../entities/federated-identity.entity.js';
import { LinkedIdentities } from '../linked-identities.js';

export interface AccountIdentities {
  readonly account: Account;
  readonly identities: readonly FederatedIdentity[];
}

export interface IdentityUnlinked {
  readonly account: Account;
  readonly identity: FederatedIdentity;
}

/**
 * An operator's view of an account's linked identities, for the admin API
 * (`/api/admin/users/{id}/identities`) and the CLI (`users:identities`, `users:unlink-identity`):
 * the same LinkedIdentities calls as the owner's routes. An operator may remove the last way to
 * sign in (docs/behaviour.md).
 */
@Injectable()
export class IdentitiesAdminService {
  private readonly logger = new Logger(IdentitiesAdminService.name);

  constructor(
    private readonly admin: AdminService,
    private readonly linked: LinkedIdentities,
  ) {}

  /** 404 as the other account routes when there is no such account. */
  async identitiesOf(account: AccountRef): Promise<AccountIdentities> {
    const user = await this.admin.findUser(account);
    return {
      account: { id: user.id, email: user.email },
      identities: await this.linked.listOf(user.id),
    };
  }

  /** 404 for an unknown account, then for an identity the account does not have. */
  async unlink(
    account: AccountRef,
    identityId: string,
    origin: RequestOrigin,
    actor?: AdminApiActor,
  ): Promise<IdentityUnlinked> {
    const user = await this.admin.findUser(account);
    const identity = await this.linked.unlink(user.id, identityId, origin, {
      kind: 'administrator',
      actor,
    });
    this.logger.log(
      `Identity ${identityId} (${identity.provider}) of user ${user.id} unlinked by an administrator`,
      forRequest(origin.requestId),
    );
    return { account: { id: user.id, email: user.email }, identity };
  }

  async identities(id: string): Promise<IdentitiesResponseDto> {
    const { identities } = await this.identitiesOf({ id });
    return { identities: identities.map((identity) => IdentityResponseDto.from(identity)) };
  }

  async unlinkIdentity(
    id: string,
    identityId: string,
    body: AdminReasonDto,
    call: AdminCall,
  ): Promise<AdminChangeResponseDto> {
    await this.unlink({ id }, identityId, call.origin, adminActorOf(call, body));
    return { userId: id, changed: true };
  }
}
