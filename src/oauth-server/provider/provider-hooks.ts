import type Provider from 'oidc-provider';
import { secretMatchesDigest } from '../oauth-clients.service.js';
import { matchesRegisteredRedirectUri } from '../redirect-uris.js';

/** The members of the library's client this file replaces (not in its typings). */
interface ProviderClient {
  readonly clientId: string;
  readonly clientSecret?: string;
  readonly clientAuthMethod: string;
  readonly redirectUris: readonly string[];
  readonly postLogoutRedirectUris?: readonly string[];
}

/**
 * Replaces two rules of the library's client with Keygate's:
 *
 * - the client secret comparison: the stored `client_secret` is the digest of the secret
 *   (oauth_clients never holds a secret), so the presented secret is digested and compared in
 *   constant time (decision 0055);
 * - the redirect URI rule: Keygate's (redirect-uris.ts), the one place that decides it; exact,
 *   except that a public client may return to any port of a loopback IP literal (RFC 8252 §7.3).
 */
export function installClientRules(provider: Provider): void {
  const prototype = provider.Client.prototype as unknown as Record<string, unknown>;
  prototype.compareClientSecret = function compareClientSecret(
    this: ProviderClient,
    presented: unknown,
  ): boolean {
    return (
      typeof presented === 'string' && secretMatchesDigest(presented, this.clientSecret ?? null)
    );
  };
  prototype.redirectUriAllowed = function redirectUriAllowed(
    this: ProviderClient,
    value: unknown,
  ): boolean {
    return (
      typeof value === 'string' &&
      matchesRegisteredRedirectUri(value, this.redirectUris, this.clientAuthMethod === 'none')
    );
  };
  prototype.postLogoutRedirectUriAllowed = function postLogoutRedirectUriAllowed(
    this: ProviderClient,
    value: unknown,
  ): boolean {
    return (
      typeof value === 'string' &&
      matchesRegisteredRedirectUri(
        value,
        this.postLogoutRedirectUris ?? [],
        this.clientAuthMethod === 'none',
      )
    );
  };
}
