import { describe, expect, it } from '@jest/globals';
import {
  admitSelfRegistration,
  isAcceptableMetadataDocumentClient,
  isLoopbackRedirectUri,
} from './self-registration-rules.js';

describe(admitSelfRegistration.name, () => {
  it('should take a registration without application_type whose redirects are all loopback as a public native one', () => {
    const admission = admitSelfRegistration({
      redirect_uris: ['http://127.0.0.1/cb', 'http://localhost:8080/cb', 'http://[::1]/cb'],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    expect(admission).toEqual({
      isAdmitted: true,
      metadata: {
        application_type: 'native',
        client_name: '127.0.0.1',
        redirect_uris: ['http://127.0.0.1/cb', 'http://localhost:8080/cb', 'http://[::1]/cb'],
        post_logout_redirect_uris: [],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        scope: 'openid profile email offline_access',
      },
    });
  });

  it('should take a registration with one https redirect as a confidential web one by default', () => {
    expect(admitSelfRegistration({ redirect_uris: ['https://a.example.com/cb'] })).toMatchObject({
      isAdmitted: true,
      metadata: { application_type: 'web', token_endpoint_auth_method: 'client_secret_basic' },
    });
  });

  it('should let a native client use a private-use scheme and a claimed https URI', () => {
    expect(
      admitSelfRegistration({
        application_type: 'native',
        redirect_uris: ['com.example.agent:/cb', 'https://agent.example.com/cb'],
      }),
    ).toMatchObject({ isAdmitted: true });
  });

  it.each([
    [{ redirect_uris: ['http://127.0.0.1/cb'], application_type: 'web' }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['vbscript:msgbox'], application_type: 'native' }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['myapp:/cb'], application_type: 'native' }, 'invalid_redirect_uri'],
    [{ redirect_uris: [42] }, 'invalid_redirect_uri'],
    [{ redirect_uris: 'https://a.example.com/cb' }, 'invalid_redirect_uri'],
    [
      { redirect_uris: ['https://a.example.com/cb'], application_type: 'desktop' },
      'invalid_client_metadata',
    ],
    [
      {
        redirect_uris: ['https://a.example.com/cb'],
        post_logout_redirect_uris: ['http://a.example.com/'],
      },
      'invalid_client_metadata',
    ],
    [
      { redirect_uris: ['https://a.example.com/cb'], response_types: ['token'] },
      'invalid_client_metadata',
    ],
    [{ redirect_uris: ['https://a.example.com/cb'], client_name: '' }, 'invalid_client_metadata'],
  ])('should refuse %j with %s, the code its description implies', (body, error) => {
    const admission = admitSelfRegistration(body);
    expect(admission).toMatchObject({ isAdmitted: false, refusal: { error } });
    if (!admission.isAdmitted) {
      // The library names the error from the description (redirect_uris… is invalid_redirect_uri).
      expect(admission.refusal.description.startsWith('redirect_uris')).toBe(
        error === 'invalid_redirect_uri',
      );
    }
  });
});

describe(isAcceptableMetadataDocumentClient.name, () => {
  it('should accept a public client with loopback or https redirects, and refuse the rest', () => {
    const client = { clientAuthMethod: 'none', redirectUris: ['http://127.0.0.1/cb'] };
    expect(isAcceptableMetadataDocumentClient(client)).toBe(true);
    expect(
      isAcceptableMetadataDocumentClient({ ...client, clientAuthMethod: 'private_key_jwt' }),
    ).toBe(false);
    expect(isAcceptableMetadataDocumentClient({ ...client, redirectUris: [] })).toBe(false);
    expect(
      isAcceptableMetadataDocumentClient({ ...client, redirectUris: ['http://a.example.com/cb'] }),
    ).toBe(false);
  });
});

describe(isLoopbackRedirectUri.name, () => {
  it.each([
    ['http://127.0.0.1:5000/cb', true],
    ['http://localhost/cb', true],
    ['http://[::1]/cb', true],
    ['https://127.0.0.1/cb', false],
    ['http://127.0.0.1.example.com/cb', false],
  ])('%s → %s', (uri, expected) => {
    expect(isLoopbackRedirectUri(uri)).toBe(expected);
  });
});
