import { Injectable } from '@nestjs/common';
import { NotFoundError } from '../common/errors/domain-errors.js';
import { AppConfig } from '../config/app-config.js';
import type { FederationConfig } from '../config/settings/federation-settings.js';
import { FederationMessages } from './federation.messages.js';
import { GithubIdentityProvider } from './providers/github-identity-provider.js';
import type { IdentityProvider } from './providers/identity-provider.js';
import { OidcIdentityProvider } from './providers/oidc-identity-provider.js';

/** The configured providers, by id, in the order of Federation__Providers. */
@Injectable()
export class IdentityProviders {
  readonly settings: FederationConfig;
  private readonly byId = new Map<string, IdentityProvider>();

  constructor(config: AppConfig) {
    if (config.federation === null) {
      throw new Error('FederationModule is mounted only with Federation__Providers');
    }
    this.settings = config.federation;
    const timeoutSeconds = config.federation.timeoutSeconds;
    for (const provider of config.federation.providers) {
      this.byId.set(
        provider.id,
        provider.type === 'oidc'
          ? new OidcIdentityProvider(provider, {
              allowInsecure: config.federation.allowInsecureIssuers,
              timeoutSeconds,
            })
          : new GithubIdentityProvider(provider, { timeoutSeconds }),
      );
    }
  }

  list(): IdentityProvider[] {
    return [...this.byId.values()];
  }

  /** The provider of a route; NotFoundError for an id not configured. */
  get(id: string): IdentityProvider {
    const provider = this.byId.get(id);
    if (provider === undefined) {
      throw new NotFoundError(FederationMessages.unknownProvider);
    }
    return provider;
  }

  /** The URL registered at the provider: `<Federation__PublicUrl>/api/auth/federation/<id>/callback`. */
  callbackUrl(id: string): string {
    return `${this.settings.publicUrl}/api/auth/federation/${id}/callback`;
  }
}
