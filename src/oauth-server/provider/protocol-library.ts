import type * as OidcProvider from 'oidc-provider';

/** panva's oidc-provider: its Provider class (`default`) and its error classes. */
export type ProtocolLibrary = typeof OidcProvider;

/** The injection token of the loaded library. */
export const PROTOCOL_LIBRARY = Symbol('ProtocolLibrary');

/**
 * Loads the library when the provider's module is built, and only then (decision 0054): with
 * OAuthServer__Enabled off nothing of it is loaded, so a deployment that does not use it is not
 * bound by its runtime requirements.
 */
export function loadProtocolLibrary(): Promise<ProtocolLibrary> {
  return import('oidc-provider');
}
