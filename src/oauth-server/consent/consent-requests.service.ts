import { Injectable, Logger } from '@nestjs/common';
import type { Interaction, InteractionResults } from 'oidc-provider';
import { NotFoundError } from '../../common/errors/domain-errors.js';
import type { RequestOrigin } from '../../common/request-origin/request-origin.js';
import { forRequest } from '../../logging/log-fields.js';
import { UsersService } from '../../users/users.service.js';
import { OAuthServerMessages } from '../oauth-server.messages.js';
import { ProviderHost } from '../provider/provider-host.js';
import { ConsentApproval, CONSENT_DENIED } from './consent-approval.js';
import type {
  ConsentDecisionResponseDto,
  ConsentRequestResponseDto,
} from './dto/consent-request.dto.js';
import { scopesToApprove, type PendingInteraction } from './pending-interaction.js';
import { PendingInteractions } from './pending-interactions.js';

/** A consent the provider waits for, signed in and not answered yet. */
interface OpenConsent {
  readonly interaction: Interaction;
  readonly pending: PendingInteraction & { readonly accountId: string };
}

/**
 * The consent API a team's own consent page uses (OAuthServer__ConsentUrl): it reads the request
 * Keygate sent the person with, then approves or denies it. The decision is stored on the
 * interaction; the person's browser, sent to `redirectTo`, resumes the flow with its own
 * interaction cookie, so a decision completes only the sign-in of the browser that started it.
 */
@Injectable()
export class ConsentRequestsService {
  private readonly logger = new Logger(ConsentRequestsService.name);

  constructor(
    private readonly host: ProviderHost,
    private readonly pendingInteractions: PendingInteractions,
    private readonly users: UsersService,
    private readonly approval: ConsentApproval,
  ) {}

  async read(challenge: string): Promise<ConsentRequestResponseDto> {
    const { pending } = await this.open(challenge);
    const user = await this.users.findById(pending.accountId);
    return {
      challenge: pending.uid,
      clientId: pending.clientId,
      clientName: pending.clientName,
      unverified: pending.isUnverified,
      localOnly: pending.isLocalOnly,
      returnHost: pending.returnHost,
      userId: pending.accountId,
      email: user?.email ?? '',
      scopes: [...scopesToApprove(pending)],
      resources: Object.entries(pending.missingResourceScopes).map(([resource, scopes]) => ({
        resource,
        scopes: [...scopes],
      })),
      expiresAt: new Date(pending.expiresAt * 1000).toISOString(),
    };
  }

  async approve(challenge: string, origin: RequestOrigin): Promise<ConsentDecisionResponseDto> {
    const { interaction, pending } = await this.open(challenge);
    const result = await this.approval.approve(pending, origin);
    this.logger.log(
      `Consent approved through the consent API for OAuth client ${pending.clientId}`,
      forRequest(origin.requestId),
    );
    return this.decide(interaction, { ...interaction.lastSubmission, ...result });
  }

  async deny(challenge: string, origin: RequestOrigin): Promise<ConsentDecisionResponseDto> {
    const { interaction, pending } = await this.open(challenge);
    this.logger.log(
      `Consent denied through the consent API for OAuth client ${pending.clientId}`,
      forRequest(origin.requestId),
    );
    return this.decide(interaction, CONSENT_DENIED);
  }

  /** The decision as the library's `interactionResult` stores it, without the browser. */
  private async decide(
    interaction: Interaction,
    result: InteractionResults,
  ): Promise<ConsentDecisionResponseDto> {
    interaction.result = result;
    // The lifetime left, on the library's own clock (its `epochTime`), as it computes it.
    await interaction.save(interaction.exp - Math.floor(Date.now() / 1000));
    return { redirectTo: interaction.returnTo };
  }

  /**
   * The interaction of `challenge` when it waits for a consent: unknown, expired, still at the
   * sign-in step or already decided are one answer (nothing to tell apart for a caller).
   */
  private async open(challenge: string): Promise<OpenConsent> {
    const interaction = await this.host.current().Interaction.find(challenge);
    if (interaction === undefined || interaction.result !== undefined) {
      throw new NotFoundError(OAuthServerMessages.unknownConsentRequest);
    }
    const pending = await this.pendingInteractions.of(interaction);
    const { accountId } = pending;
    if (pending.prompt !== 'consent' || accountId === undefined || !pending.known) {
      throw new NotFoundError(OAuthServerMessages.unknownConsentRequest);
    }
    return { interaction, pending: { ...pending, accountId } };
  }
}
