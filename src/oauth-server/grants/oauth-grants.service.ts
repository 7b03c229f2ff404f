import { Injectable, Logger } from '@nestjs/common';
import { NotFoundError } from '../../common/errors/domain-errors.js';
import type { RequestOrigin } from '../../common/request-origin/request-origin.js';
import { Clock } from '../../common/time/clock.js';
import { UnitOfWork } from '../../database/unit-of-work.js';
import { AuthEvents } from '../../events/auth-events.js';
import { forRequest } from '../../logging/log-fields.js';
import { UsersMessages } from '../../users/users.messages.js';
import { UsersService } from '../../users/users.service.js';
import { OAuthClientsService, OAUTH_SCOPES } from '../oauth-clients.service.js';
import { OAuthServerMessages } from '../oauth-server.messages.js';
import { artefactDigest } from '../storage/artefact-adapter.js';
import { OAuthArtefactRepository } from '../storage/oauth-artefact.repository.js';
import type { OAuthGrantListResponseDto } from './dto/oauth-grant-response.dto.js';
import { OAuthConsentRepository } from './oauth-consent.repository.js';

/**
 * The consents people give applications: recorded when they approve on the consent page,
 * remembered across browser sessions (the provider loads the grant they name), listed to the
 * person and withdrawn by them, which ends every token of the grant at once.
 */
@Injectable()
export class OAuthGrantsService {
  private readonly logger = new Logger(OAuthGrantsService.name);

  constructor(
    private readonly consents: OAuthConsentRepository,
    private readonly artefacts: OAuthArtefactRepository,
    private readonly clients: OAuthClientsService,
    private readonly unitOfWork: UnitOfWork,
    private readonly clock: Clock,
    private readonly events: AuthEvents,
    private readonly users: UsersService,
  ) {}

  /**
   * Records the consent (`scopes`: all the grant covers) with its `oauth_consent_granted` event
   * (`given.approved`: what the person approved this time), in one transaction.
   */
  async record(
    userId: string,
    clientId: string,
    scopes: readonly string[],
    grantId: string,
    given: { readonly approved: readonly string[]; readonly origin: RequestOrigin },
  ) {
    await this.unitOfWork.transaction(async (m) => {
      await this.consents.saveWithin(m, {
        userId,
        clientId,
        scopes: inScopeOrder(scopes).join(' '),
        grantId,
        grantedAt: this.clock.now(),
      });
      await this.events.record(
        m,
        {
          type: 'oauth_consent_granted',
          userId,
          clientId,
          scopes: inScopeOrder(given.approved),
        },
        given.origin,
      );
    });
  }

  /** The grant id of the person's consent to the client, if any. */
  async grantIdOf(userId: string, clientId: string): Promise<string | undefined> {
    return (await this.consents.find(userId, clientId))?.grantId;
  }

  async list(userId: string): Promise<OAuthGrantListResponseDto> {
    const consents = await this.consents.ofUser(userId);
    const grants = [];
    for (const consent of consents) {
      const client = await this.clients.find(consent.clientId);
      if (client !== null) {
        grants.push({
          clientId: consent.clientId,
          clientName: client.name,
          scopes: consent.scopes.split(' ').filter((scope) => scope !== ''),
          grantedAt: consent.grantedAt.toISOString(),
        });
      }
    }
    return { grants };
  }

  /** The admin API's listing of an account's consents; unknown account: not found. */
  async listForAdmin(userId: string): Promise<OAuthGrantListResponseDto> {
    if ((await this.users.findById(userId)) === null) {
      throw new NotFoundError(UsersMessages.notFound);
    }
    return this.list(userId);
  }

  /** Withdraws the consent and ends its grant's tokens, atomically with its event. */
  async withdraw(userId: string, clientId: string, origin: RequestOrigin): Promise<void> {
    const consent = await this.consents.find(userId, clientId);
    if (consent === null) {
      throw new NotFoundError(OAuthServerMessages.unknownGrant);
    }
    const deleted = await this.unitOfWork.transaction(async (m) => {
      if (!(await this.consents.deleteWithin(m, userId, clientId))) {
        return false;
      }
      await this.artefacts.deleteGrantWithin(m, consent.grantId, artefactDigest(consent.grantId));
      await this.events.record(
        m,
        {
          type: 'oauth_consent_withdrawn',
          userId,
          clientId,
          scopes: consent.scopes.split(' ').filter((scope) => scope !== ''),
        },
        origin,
      );
      return true;
    });
    if (!deleted) {
      throw new NotFoundError(OAuthServerMessages.unknownGrant);
    }
    this.logger.log(
      `User ${userId} withdrew the consent to OAuth client ${clientId}`,
      forRequest(origin.requestId),
    );
  }
}

/** The scopes among `scopes`, in OAUTH_SCOPES order. */
function inScopeOrder(scopes: readonly string[]): string[] {
  const granted = new Set(scopes);
  return OAUTH_SCOPES.filter((scope) => granted.has(scope));
}
