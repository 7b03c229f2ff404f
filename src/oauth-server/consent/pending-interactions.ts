import { Injectable } from '@nestjs/common';
import type { Interaction } from 'oidc-provider';
import { AppConfig } from '../../config/app-config.js';
import { OAuthClientsService } from '../oauth-clients.service.js';
import { ProviderHost } from '../provider/provider-host.js';
import { isLoopbackRedirectUri } from '../registration/self-registration-rules.js';
import {
  pendingOf,
  textOf,
  type InteractionClient,
  type PendingInteraction,
} from './pending-interaction.js';

/**
 * Reads an interaction for the consent steps (the hosted pages and the consent API): its client,
 * registered by an operator, by itself, or known by its metadata document (which the library
 * holds in its cache, not in the table), and what it asks.
 */
@Injectable()
export class PendingInteractions {
  /** Where a form may lead besides the client: a team's own consent page. */
  private readonly formTargets: readonly string[];

  constructor(
    private readonly host: ProviderHost,
    private readonly clients: OAuthClientsService,
    config: AppConfig,
  ) {
    const consentUrl = config.oauthServer?.consentUrl ?? null;
    this.formTargets = consentUrl === null ? [] : [new URL(consentUrl).origin];
  }

  async of(interaction: Interaction): Promise<PendingInteraction & { readonly known: boolean }> {
    const client = await this.clientOf(textOf(interaction.params.client_id));
    return { ...pendingOf(interaction, client, this.formTargets), known: client !== null };
  }

  private async clientOf(clientId: string): Promise<InteractionClient | null> {
    const registered = await this.clients.find(clientId);
    const documented =
      registered === null
        ? await this.host
            .current()
            .Client.find(clientId)
            .catch(() => undefined)
        : undefined;
    if (registered === null && documented === undefined) {
      return null;
    }
    const redirectUris = registered?.redirectUris ?? documented?.redirectUris ?? [];
    const isUnverified = registered?.isSelfRegistered ?? true;
    return {
      name: registered?.name ?? documented?.clientName ?? clientId,
      isUnverified,
      isLocalOnly:
        isUnverified && redirectUris.length > 0 && redirectUris.every(isLoopbackRedirectUri),
    };
  }
}
