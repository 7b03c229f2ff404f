import { describe, expect, it } from '@jest/globals';
import type { StoredOAuthClient } from '../oauth-clients.service.js';
import { clientMetadataOf } from './client-adapter.js';

const BASE: StoredOAuthClient = {
  clientId: '6f1c1c9e-6a43-4a39-8f6f-1d2f4a1f0b11',
  name: 'App',
  redirectUris: ['https://app.example.com/cb'],
  postLogoutRedirectUris: [],
  isPublic: false,
  scopes: ['openid', 'email'],
  grantTypes: ['authorization_code'],
  createdAt: new Date('2026-11-29T08:00:00.000Z'),
  isSelfRegistered: false,
  secretDigest: 'ab'.repeat(32),
};

describe('clientMetadataOf', () => {
  it('should give a confidential client client_secret_basic and its digest, never another method', () => {
    expect(clientMetadataOf(BASE, 'ES256')).toEqual({
      client_id: BASE.clientId,
      client_name: 'App',
      token_endpoint_auth_method: 'client_secret_basic',
      client_secret: 'ab'.repeat(32),
      application_type: 'web',
      redirect_uris: ['https://app.example.com/cb'],
      post_logout_redirect_uris: [],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      scope: 'openid email',
      id_token_signed_response_alg: 'ES256',
    });
  });

  it('should make a public client a native one without a secret', () => {
    const metadata = clientMetadataOf({ ...BASE, isPublic: true, secretDigest: null }, 'EdDSA');
    expect(metadata).toMatchObject({
      token_endpoint_auth_method: 'none',
      application_type: 'native',
      id_token_signed_response_alg: 'EdDSA',
    });
    expect(metadata).not.toHaveProperty('client_secret');
  });

  it('should make a confidential client with a private-use scheme a native one', () => {
    const metadata = clientMetadataOf({ ...BASE, redirectUris: ['com.example.app:/cb'] }, 'RS256');
    expect(metadata.application_type).toBe('native');
  });

  it('should give a client only the grants it is registered for that the provider serves', () => {
    const all = {
      ...BASE,
      grantTypes: ['authorization_code', 'device_code', 'client_credentials'],
    } as const;
    expect(clientMetadataOf(all, 'ES256').grant_types).toEqual([
      'authorization_code',
      'refresh_token',
    ]);
    expect(
      clientMetadataOf(all, 'ES256', { deviceFlow: true, clientCredentials: true }).grant_types,
    ).toEqual([
      'authorization_code',
      'refresh_token',
      'urn:ietf:params:oauth:grant-type:device_code',
      'client_credentials',
    ]);
    const service = clientMetadataOf(
      { ...BASE, redirectUris: [], grantTypes: ['client_credentials'] },
      'ES256',
      { deviceFlow: true, clientCredentials: true },
    );
    expect(service).toMatchObject({ grant_types: ['client_credentials'], response_types: [] });
  });

  it('should never give client credentials to a public client', () => {
    const metadata = clientMetadataOf(
      {
        ...BASE,
        isPublic: true,
        secretDigest: null,
        grantTypes: ['device_code', 'client_credentials'],
      },
      'ES256',
      { deviceFlow: true, clientCredentials: true },
    );
    expect(metadata.grant_types).toEqual([
      'urn:ietf:params:oauth:grant-type:device_code',
      'refresh_token',
    ]);
  });
});
