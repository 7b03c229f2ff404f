import { Injectable } from '@nestjs/common';
import { ConflictError, NotFoundError } from '../common/errors/domain-errors.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { AdminApiActor } from '../events/auth-event.js';
import { AuthEvents } from '../events/auth-events.js';
import { Passkeys } from '../passkeys/passkeys.service.js';
import { hasPassword } from '../passwords/password-hasher.js';
import { UsersService } from '../users/users.service.js';
import type { FederatedIdentity } from './entities/federated-identity.entity.js';
import { FederatedIdentityRepository } from './federated-identity.repository.js';
import { FederationMessages } from './federation.messages.js';

/** Who unlinks: the account's owner (who must keep a way in), or an operator (who need not). */
export type Unlinker =
  { readonly kind: 'owner' } | { readonly kind: 'administrator'; readonly actor?: AdminApiActor };

/**
 * The identities linked to an account, as their owner and operators see and remove them. One
 * place unlinks, so the owner's route, the admin API and the CLI record the same
 * `federation_identity_unlinked` event (and so send the same webhook).
 */
@Injectable()
export class LinkedIdentities {
  constructor(
    private readonly identities: FederatedIdentityRepository,
    private readonly usersService: UsersService,
    private readonly passkeys: Passkeys,
    private readonly unitOfWork: UnitOfWork,
    private readonly events: AuthEvents,
  ) {}

  /** The account's identities, oldest first. */
  listOf(userId: string): Promise<FederatedIdentity[]> {
    return this.identities.listOf(userId);
  }

  /**
   * Unlinks one identity of the account (404 when the account has no such identity). The owner
   * is refused (409) when it is the account's last way to sign in: no password, no passkey, no
   * other identity. An operator is not (docs/behaviour.md): the identity may be of a provider
   * that was compromised, and the person can still set a password through the reset mail. Two
   * unlinks of one account take turns.
   */
  async unlink(
    userId: string,
    id: string,
    origin: RequestOrigin,
    by: Unlinker,
  ): Promise<FederatedIdentity> {
    return this.unitOfWork.transaction(async (m) => {
      await this.unitOfWork.lock(m, `federated-identities:${userId}`);
      const identities = await this.identities.listOf(userId, m);
      const identity = identities.find((candidate) => candidate.id === id);
      if (identity === undefined) {
        throw new NotFoundError(FederationMessages.identityNotFound);
      }
      if (by.kind === 'owner') {
        const user = await this.usersService.findById(userId, m);
        if (user === null) {
          throw new NotFoundError(FederationMessages.identityNotFound);
        }
        const others =
          identities.length -
          1 +
          (await this.passkeys.countWithin(m, userId)) +
          (hasPassword(user.passwordHash) ? 1 : 0);
        if (others === 0) {
          throw new ConflictError(FederationMessages.lastWayToSignIn);
        }
      }
      if (!(await this.identities.remove(m, userId, id))) {
        throw new NotFoundError(FederationMessages.identityNotFound);
      }
      await this.events.record(
        m,
        {
          type: 'federation_identity_unlinked',
          userId,
          provider: identity.provider,
          identityId: id,
          ...(by.kind === 'administrator' && by.actor !== undefined ? { actor: by.actor } : {}),
        },
        origin,
      );
      return identity;
    });
  }
}
