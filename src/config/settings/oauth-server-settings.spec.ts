import { describe, expect, it } from '@jest/globals';
import { plainToInstance } from 'class-transformer';
import { ConfigurationError, loadAppConfig } from '../app-config.js';
import { EnvironmentVariables } from '../environment-variables.js';
import { checkOAuthServer } from './oauth-server-settings.js';

const SECRET = 'a-test-signing-secret-of-at-least-32-characters';
const ASYMMETRIC = {
  Jwt__SigningAlgorithm: 'ES256',
  Keys__EncryptionKeys: Buffer.alloc(32, 7).toString('base64'),
};

function load(environment: Record<string, string>) {
  return loadAppConfig({ Jwt__SecretKey: SECRET, NODE_ENV: 'production', ...environment });
}

function problemOf(environment: Record<string, string>): string {
  try {
    load(environment);
  } catch (error: unknown) {
    if (error instanceof ConfigurationError) {
      return error.message;
    }
    throw error;
  }
  throw new Error('the configuration was accepted');
}

function check(environment: Record<string, string>, nodeVersion = 'v26.0.0') {
  const env = plainToInstance(EnvironmentVariables, { ...ASYMMETRIC, ...environment });
  return checkOAuthServer(env, nodeVersion);
}

describe('OAuthServer__ settings', () => {
  it('should leave the provider off by default, whatever the other keys say', () => {
    expect(load({}).oauthServer).toBeNull();
    expect(load({ OAuthServer__Issuer: 'not a url' }).oauthServer).toBeNull();
  });

  it('should read the issuer, the lifetimes and the consent page when on', () => {
    expect(
      check({
        OAuthServer__Enabled: 'true',
        OAuthServer__Issuer: 'https://ID.example.com',
        OAuthServer__AccessTokenMinutes: '5',
        OAuthServer__RefreshTokenDays: '14',
        OAuthServer__ConsentUrl: 'https://app.example.com/consent',
      }),
    ).toEqual({
      oauthServer: {
        issuer: 'https://id.example.com',
        accessTokenMinutes: 5,
        refreshTokenDays: 14,
        consentUrl: 'https://app.example.com/consent',
        resources: [],
        requireResource: false,
        dynamicRegistration: 'off',
        clientIdMetadataDocuments: false,
        allowPrivateFetch: false,
        deviceFlow: false,
        clientCredentials: false,
      },
      problems: [],
    });
  });

  it('should read the self-registration keys, and refuse an unknown registration mode', () => {
    expect(
      check({
        OAuthServer__Enabled: 'true',
        OAuthServer__Issuer: 'https://id.example.com',
        OAuthServer__DynamicRegistration: ' Initial-Access-Token ',
        OAuthServer__ClientIdMetadataDocuments: 'true',
        OAuthServer__AllowPrivateFetch: '1',
      }).oauthServer,
    ).toMatchObject({
      dynamicRegistration: 'initial-access-token',
      clientIdMetadataDocuments: true,
      allowPrivateFetch: true,
    });
    expect(problemOf({ ...ASYMMETRIC, OAuthServer__DynamicRegistration: 'anyone' })).toContain(
      'OAuthServer__DynamicRegistration',
    );
  });

  it('should not warn at start-up about a consent URL: the consent API makes it work', () => {
    expect(
      load({
        ...ASYMMETRIC,
        OAuthServer__Enabled: 'true',
        OAuthServer__Issuer: 'https://id.example.com',
        OAuthServer__ConsentUrl: 'https://app.example.com/consent',
      }).warnings,
    ).toEqual([]);
  });

  it('should stop the start-up with a clear message when the tokens are signed with HS256', () => {
    expect(
      problemOf({ OAuthServer__Enabled: 'true', OAuthServer__Issuer: 'https://id.example.com' }),
    ).toContain(
      'OAuthServer__Enabled=true needs an asymmetric Jwt__SigningAlgorithm (ES256, EdDSA or RS256): applications verify ID tokens with the keys /.well-known/jwks.json publishes, never with the shared HS256 secret',
    );
  });

  it('should refuse a Node line the protocol library does not run on', () => {
    expect(
      check(
        { OAuthServer__Enabled: 'true', OAuthServer__Issuer: 'https://id.example.com' },
        'v20.19.0',
      ).problems,
    ).toEqual([
      'OAuthServer__Enabled=true needs Node 22 or later (this is v20.19.0): the OpenID provider library does not run on older lines',
    ]);
  });

  it('should require the issuer when on', () => {
    expect(check({ OAuthServer__Enabled: 'true' }).problems).toEqual([
      'OAuthServer__Issuer is required when OAuthServer__Enabled=true',
    ]);
  });

  it.each([
    ['https://id.example.com/', 'a trailing slash'],
    ['https://id.example.com/oidc', 'a path'],
    ['https://id.example.com?x=1', 'a query'],
    ['https://id.example.com#x', 'a fragment'],
    ['https://user:pw@id.example.com', 'credentials'],
    ['http://id.example.com', 'http away from loopback'],
    ['ftp://id.example.com', 'another scheme'],
    ['id.example.com', 'no scheme'],
  ])('should refuse the issuer %s (%s)', (issuer) => {
    expect(check({ OAuthServer__Enabled: 'true', OAuthServer__Issuer: issuer }).problems).toEqual([
      `OAuthServer__Issuer: "${issuer}" is not an origin without a path (https://id.example.com; http only on loopback)`,
    ]);
  });

  it.each(['http://localhost:3000', 'http://127.0.0.1:8080', 'http://[::1]:3000'])(
    'should accept the loopback issuer %s over http',
    (issuer) => {
      expect(
        check({ OAuthServer__Enabled: 'true', OAuthServer__Issuer: issuer }).oauthServer?.issuer,
      ).toBe(issuer);
    },
  );

  it('should refuse a consent page that is not an absolute https URL', () => {
    expect(
      check({
        OAuthServer__Enabled: 'true',
        OAuthServer__Issuer: 'https://id.example.com',
        OAuthServer__ConsentUrl: 'http://app.example.com/consent',
      }).problems,
    ).toEqual([
      'OAuthServer__ConsentUrl: "http://app.example.com/consent" is not an absolute https URL without credentials or fragment (http only on loopback)',
    ]);
  });
});

describe('OAuthServer__DeviceFlow and OAuthServer__ClientCredentials', () => {
  const on = { OAuthServer__Enabled: 'true', OAuthServer__Issuer: 'https://id.example.com' };
  const resources = JSON.stringify([
    { uri: 'https://api.example.com', name: 'API', scopes: ['api:read'] },
  ]);

  it('should read both grants, off by default', () => {
    expect(check(on).oauthServer).toMatchObject({ deviceFlow: false, clientCredentials: false });
    expect(
      check({
        ...on,
        OAuthServer__DeviceFlow: 'true',
        OAuthServer__ClientCredentials: 'true',
        OAuthServer__Resources: resources,
      }).oauthServer,
    ).toMatchObject({ deviceFlow: true, clientCredentials: true });
  });

  it('should refuse the client credentials grant without a resource to issue tokens for', () => {
    expect(check({ ...on, OAuthServer__ClientCredentials: 'true' }).problems).toEqual([
      'OAuthServer__ClientCredentials=true needs at least one resource in OAuthServer__Resources: its tokens are for a resource only',
    ]);
  });
});
