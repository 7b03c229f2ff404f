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
  ) {}

  async find(id: string): Promise<AdapterPayload | undefined> {
    const client = await this.clients.findStored(id);
    return client === null ? undefined : clientMetadataOf(client, this.idTokenAlgorithm());
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

/** The client metadata (RFC 7591 names) of a registered client. */
export function clientMetadataOf(
  client: StoredOAuthClient,
  idTokenAlgorithm: AsymmetricSigningAlgorithm,
): AdapterPayload {
  const isNative = client.isPublic || client.redirectUris.some((uri) => !WEB_SCHEMES.test(uri));
  return {
    client_id: client.clientId,
    client_name: client.name,
    ...(client.isPublic || client.secretDigest === null
      ? { token_endpoint_auth_method: 'none' }
      : { token_endpoint_auth_method: 'client_secret_basic', client_secret: client.secretDigest }),
    application_type: isNative ? 'native' : 'web',
    redirect_uris: [...client.redirectUris],
    post_logout_redirect_uris: [...client.postLogoutRedirectUris],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    scope: client.scopes.join(' '),
    id_token_signed_response_alg: idTokenAlgorithm,
  };
}

function stringsOf(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === 'string')
    : [];
}
