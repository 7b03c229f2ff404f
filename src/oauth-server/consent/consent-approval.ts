import { Injectable } from '@nestjs/common';
import type { InteractionResults } from 'oidc-provider';
import type { RequestOrigin } from '../../common/request-origin/request-origin.js';
import { OAuthGrantsService } from '../grants/oauth-grants.service.js';
import { ProviderHost } from '../provider/provider-host.js';
import type { PendingInteraction } from './pending-interaction.js';

/** The library's result of a refused consent (OAuth `access_denied`). */
export const CONSENT_DENIED: InteractionResults = {
  error: 'access_denied',
  error_description: 'End-User aborted interaction',
};

/**
 * A person's approval of a pending consent, wherever it is given (Keygate's consent page, or a
 * team's own through the consent API): the interaction's grant gains what it asks, and the
 * consent is recorded (remembered, listed, audited) as one.
 */
@Injectable()
export class ConsentApproval {
  constructor(
    private readonly host: ProviderHost,
    private readonly grants: OAuthGrantsService,
  ) {}

  /** Saves the grant and records the consent; the interaction's result names the grant. */
  async approve(
    pending: PendingInteraction & { readonly accountId: string },
    origin: RequestOrigin,
  ): Promise<InteractionResults> {
    const provider = this.host.current();
    const grant =
      (pending.grantId === undefined ? undefined : await provider.Grant.find(pending.grantId)) ??
      new provider.Grant({ accountId: pending.accountId, clientId: pending.clientId });
    if (pending.missingScopes.length > 0) {
      grant.addOIDCScope(pending.missingScopes.join(' '));
    }
    if (pending.missingClaims.length > 0) {
      grant.addOIDCClaims([...pending.missingClaims]);
    }
    for (const [indicator, scopes] of Object.entries(pending.missingResourceScopes)) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    const grantId = await grant.save();
    await this.grants.record(
      pending.accountId,
      pending.clientId,
      grant.getOIDCScope().split(' '),
      grantId,
      {
        // What the person approved this time: the missing scopes, or with prompt=consent on a
        // grant that already covers the request, what the request asks.
        approved: pending.missingScopes.length > 0 ? pending.missingScopes : pending.askedScopes,
        origin,
      },
    );
    return { consent: { grantId } };
  }
}
