import type { FederationProviderConfig } from '../../config/settings/federation-settings.js';

/**
 * What one flow sends to a provider: its `state`, the PKCE verifier whose S256 challenge goes
 * with it, and (OpenID Connect) its `nonce`. The last two are derived from the state
 * (flow-secrets.ts), so the flow's row holds no secret.
 */
export interface FlowSecrets {
  readonly state: string;
  readonly codeVerifier: string;
  readonly nonce: string;
}

/** Who a provider says signed in: the pair that names the identity, and the address it gave. */
export interface ProviderProfile {
  readonly issuer: string;
  readonly subject: string;
  /** Lower-cased and trimmed; null when the provider gave none. */
  readonly email: string | null;
  /** True only when the provider asserted the address as verified (`email_verified` exactly `true`). */
  readonly emailVerified: boolean;
  /** A name to derive a username from (`preferred_username`, `name`, GitHub's `login`). */
  readonly displayName: string | null;
}

/** The machine codes a provider's answer can end a flow with. */
export type ProviderFailure = 'access_denied' | 'provider_error' | 'provider_unavailable';

/** The provider refused, misbehaved, or did not answer in time; `detail` is for the log only. */
export class ProviderRefusal extends Error {
  constructor(
    readonly code: ProviderFailure,
    readonly detail: string,
  ) {
    super(`${code}: ${detail}`);
    this.name = 'ProviderRefusal';
  }
}

/** One configured provider: where people are sent, and what its answer proves. */
export interface IdentityProvider {
  readonly config: FederationProviderConfig;
  /** The URL at the provider that starts `secrets`' flow; ProviderRefusal when unreachable. */
  authorizationUrl(secrets: FlowSecrets, redirectUri: string): Promise<URL>;
  /**
   * Checks the authorization response (`callbackUrl`: the callback as it arrived) against the
   * flow and redeems its code; ProviderRefusal on anything amiss. Tokens are used and dropped.
   */
  complete(callbackUrl: URL, secrets: FlowSecrets, redirectUri: string): Promise<ProviderProfile>;
}

/** Trims and lower-cases a provider's address, or null when it is not a plausible one. */
export function providerEmail(value: unknown): string | null {
  if (typeof value !== 'string') {
    return null;
  }
  const email = value.trim().toLowerCase();
  return email.length > 0 && email.length <= 254 && /^[^\s@]+@[^\s@]+$/.test(email) ? email : null;
}
