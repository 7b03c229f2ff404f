import type { Adapter, AdapterPayload, AsymmetricSigningAlgorithm } from 'oidc-provider';
import type { OAuthClientsService, StoredOAuthClient } from '../oauth-clients.service.js';
import { registrationOrigin } from '../registration/registration-origin.js';

/** A private-use scheme (`com.example.app:/cb`): only a native application registers one. */
const WEB_SCHEMES = /^https?:/;

/**
 * The provider's clients, read from `oauth_clients` (operators register them with the CLI or the
 * admin API). The provider writes one only when a client registers itself (dynamic
 * registration, registration-feature.ts): it is stored with the digest of its secret, never the
 * secret, and marked self-registered. A confidential client's `client_secret` is the
 * digest of its secret: the provider's comparison is replaced by one that digests the presented
 * secret first (see provider-hooks.ts), and no method that would use the secret as a key
 * (client_secret_jwt, HS256) is enabled.
 */
export class ClientAdapter implements Adapter {
  constructor(
    private readonly clients: OAuthClientsService,
    private readonly idTokenAlgorithm: () => AsymmetricSigningAlgorithm,
    private readonly served: ServedGrants = NO_EXTRA_GRANTS,
  ) {}

  async find(id: string): Promise<AdapterPayload | undefined> {
    const client = await this.clients.findStored(id);
    return client === null
      ? undefined
      : clientMetadataOf(client, this.idTokenAlgorithm(), this.served);
  }

  /** A client that registered itself, as the library built it from the admitted request. */
  async upsert(id: string, payload: AdapterPayload): Promise<void> {
    const origin = registrationOrigin.getStore();
    if (origin === undefined) {
      throw new Error('The provider stores a client only while one registers itself');
    }
    await this.clients.addSelfRegistered(
      {
        clientId: id,
        name: typeof payload.client_name === 'string' ? payload.client_name : '',
        redirectUris: stringsOf(payload.redirect_uris),
        postLogoutRedirectUris: stringsOf(payload.post_logout_redirect_uris),
        clientSecret:
          payload.token_endpoint_auth_method === 'none' || typeof payload.client_secret !== 'string'
            ? null
            : payload.client_secret,
      },
      origin,
    );
  }
  findByUid(): Promise<undefined> {
    return Promise.resolve(undefined);
  }
  findByUserCode(): Promise<undefined> {
    return Promise.resolve(undefined);
  }
  consume(): Promise<void> {
    return Promise.resolve();
  }
  destroy(): Promise<void> {
    return Promise.resolve();
  }
  revokeByGrantId(): Promise<void> {
    return Promise.resolve();
  }
}

/** The grants beyond the authorization code the provider serves (OAuthServer__*). */
export interface ServedGrants {
  readonly deviceFlow: boolean;
  readonly clientCredentials: boolean;
}

const NO_EXTRA_GRANTS: ServedGrants = { deviceFlow: false, clientCredentials: false };

/** The device grant's name at the token endpoint (RFC 8628 §3.4). */
export const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

/**
 * The library's grant types of a client: those it is registered for that the provider serves
 * (a grant switched off is not the client's either, so its setting alone turns it off). The
 * authorization code and device grants bring refresh tokens; client credentials only to a
 * confidential client (RFC 6749 §4.4), whatever was stored.
 */
function grantTypesOf(client: StoredOAuthClient, served: ServedGrants): string[] {
  const types = new Set<string>();
  if (client.grantTypes.includes('authorization_code')) {
    types.add('authorization_code').add('refresh_token');
  }
  if (served.deviceFlow && client.grantTypes.includes('device_code')) {
    types.add(DEVICE_CODE_GRANT_TYPE).add('refresh_token');
  }
  if (
    served.clientCredentials &&
    client.grantTypes.includes('client_credentials') &&
    !client.isPublic &&
    client.secretDigest !== null
  ) {
    types.add('client_credentials');
  }
  return [...types];
}

/** The client metadata (RFC 7591 names) of a registered client. */
export function clientMetadataOf(
  client: StoredOAuthClient,
  idTokenAlgorithm: AsymmetricSigningAlgorithm,
  served: ServedGrants = NO_EXTRA_GRANTS,
): AdapterPayload {
  const isNative = client.isPublic || client.redirectUris.some((uri) => !WEB_SCHEMES.test(uri));
  const grantTypes = grantTypesOf(client, served);
  return {
    client_id: client.clientId,
    client_name: client.name,
    ...(client.isPublic || client.secretDigest === null
      ? { token_endpoint_auth_method: 'none' }
      : { token_endpoint_auth_method: 'client_secret_basic', client_secret: client.secretDigest }),
    application_type: isNative ? 'native' : 'web',
    redirect_uris: [...client.redirectUris],
    post_logout_redirect_uris: [...client.postLogoutRedirectUris],
    grant_types: grantTypes,
    response_types: grantTypes.includes('authorization_code') ? ['code'] : [],
    scope: client.scopes.join(' '),
    id_token_signed_response_alg: idTokenAlgorithm,
  };
}

function stringsOf(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === 'string')
    : [];
}
