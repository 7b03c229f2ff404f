import { describe, expect, it } from '@jest/globals';
import { plainToInstance } from 'class-transformer';
import { EnvironmentVariables } from '../environment-variables.js';
import { canonicalResourceUri, parseOAuthResources } from './oauth-resources.js';
import { checkOAuthServer } from './oauth-server-settings.js';

const ON = {
  Jwt__SigningAlgorithm: 'ES256',
  Keys__EncryptionKeys: Buffer.alloc(32, 7).toString('base64'),
  OAuthServer__Enabled: 'true',
  OAuthServer__Issuer: 'https://id.example.com',
};

function check(environment: Record<string, string>) {
  return checkOAuthServer(
    plainToInstance(EnvironmentVariables, { ...ON, ...environment }),
    'v26.0.0',
  );
}

describe('OAuthServer__Resources', () => {
  it('should declare no resource and require none by default', () => {
    expect(check({}).oauthServer).toMatchObject({ resources: [], requireResource: false });
  });

  it('should read the resources, canonical (scheme and host in lower case), with the default lifetime', () => {
    const resources = JSON.stringify([
      { uri: 'HTTPS://MCP.Example.com/Mcp', name: 'MCP', scopes: ['mcp:tools', 'mcp:read'] },
      {
        uri: 'https://api.example.com',
        name: 'API',
        scopes: ['orders:read'],
        accessTokenMinutes: 3,
      },
    ]);
    expect(
      check({
        OAuthServer__Resources: resources,
        OAuthServer__RequireResource: 'true',
        OAuthServer__AccessTokenMinutes: '7',
      }),
    ).toMatchObject({
      problems: [],
      oauthServer: {
        requireResource: true,
        resources: [
          {
            uri: 'https://mcp.example.com/Mcp',
            name: 'MCP',
            scopes: ['mcp:tools', 'mcp:read'],
            accessTokenMinutes: 7,
          },
          {
            uri: 'https://api.example.com',
            name: 'API',
            scopes: ['orders:read'],
            accessTokenMinutes: 3,
          },
        ],
      },
    });
  });

  it.each([
    ['not json', 'OAuthServer__Resources is not valid JSON'],
    [
      '{}',
      'OAuthServer__Resources must be a JSON array of { "uri", "name", "scopes", "accessTokenMinutes" }',
    ],
    ['[1]', 'OAuthServer__Resources[0] is not an object'],
    [
      '[{"uri":"http://api.example.com","name":"A","scopes":["a"]}]',
      'OAuthServer__Resources[0].uri: "http://api.example.com" is not an absolute https URI without credentials or fragment (http only on loopback)',
    ],
    [
      '[{"uri":"https://api.example.com/#x","name":"A","scopes":["a"]}]',
      'OAuthServer__Resources[0].uri: "https://api.example.com/#x" is not an absolute https URI without credentials or fragment (http only on loopback)',
    ],
    [
      '[{"uri":"https://api.example.com","name":"A","scopes":["a"]},{"uri":"https://API.example.com/","name":"B","scopes":["b"]}]',
      'OAuthServer__Resources[1].uri: "https://api.example.com/" is declared twice',
    ],
    [
      '[{"uri":"https://api.example.com","scopes":["a"]}]',
      'OAuthServer__Resources[0].name is required',
    ],
    [
      '[{"uri":"https://api.example.com","name":"A","scopes":[]}]',
      'OAuthServer__Resources[0].scopes must be a non-empty array of scope names without spaces',
    ],
    [
      '[{"uri":"https://api.example.com","name":"A","scopes":["a b"]}]',
      'OAuthServer__Resources[0].scopes must be a non-empty array of scope names without spaces',
    ],
    [
      '[{"uri":"https://api.example.com","name":"A","scopes":["openid"]}]',
      "OAuthServer__Resources[0].scopes cannot hold openid, profile, email or offline_access (the provider's own scopes)",
    ],
    [
      '[{"uri":"https://api.example.com","name":"A","scopes":["a"],"accessTokenMinutes":61}]',
      'OAuthServer__Resources[0].accessTokenMinutes must be a whole number from 1 to 60',
    ],
  ])('should stop the start-up on %s', (raw, problem) => {
    expect(check({ OAuthServer__Resources: raw })).toEqual({
      oauthServer: null,
      problems: [problem],
    });
  });

  it('should refuse RequireResource with no resource declared', () => {
    expect(check({ OAuthServer__RequireResource: 'true' })).toEqual({
      oauthServer: null,
      problems: [
        'OAuthServer__RequireResource=true needs at least one resource in OAuthServer__Resources',
      ],
    });
  });

  it('should keep a canonical URI as written but for the scheme, host and default port', () => {
    expect(canonicalResourceUri('HTTPS://Api.Example.COM:443/V1?x=Y')).toBe(
      'https://api.example.com/V1?x=Y',
    );
    expect(canonicalResourceUri('https://api.example.com')).toBe('https://api.example.com');
    expect(canonicalResourceUri('http://127.0.0.1:8080/mcp')).toBe('http://127.0.0.1:8080/mcp');
    expect(canonicalResourceUri('https://user:pw@api.example.com')).toBeNull();
    expect(parseOAuthResources('', 10)).toEqual({ resources: [], problems: [] });
  });
});
