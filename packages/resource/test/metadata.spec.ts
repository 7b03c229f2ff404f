import { protectedResourceMetadata, protectedResourceMetadataUrl } from '../src/index.js';

describe('protectedResourceMetadata', () => {
  it('should be the RFC 9728 document, the resource exactly as given', () => {
    expect(
      protectedResourceMetadata({
        issuer: 'https://id.example.com',
        resource: 'https://mcp.example.com/mcp',
        scopesSupported: ['files:read', 'files:write'],
      }),
    ).toStrictEqual({
      resource: 'https://mcp.example.com/mcp',
      authorization_servers: ['https://id.example.com'],
      scopes_supported: ['files:read', 'files:write'],
      bearer_methods_supported: ['header'],
    });
  });

  it('should keep a bare origin without the slash a URL parser would add', () => {
    expect(
      protectedResourceMetadata({
        issuer: 'http://127.0.0.1:3000',
        resource: 'https://api.example.com',
        resourceName: 'Pedidos',
        resourceDocumentation: 'https://api.example.com/docs',
      }),
    ).toStrictEqual({
      resource: 'https://api.example.com',
      authorization_servers: ['http://127.0.0.1:3000'],
      bearer_methods_supported: ['header'],
      resource_name: 'Pedidos',
      resource_documentation: 'https://api.example.com/docs',
    });
  });

  it.each([
    ['a resource with a fragment', { resource: 'https://mcp.example.com/mcp#a' }],
    ['a relative resource', { resource: 'mcp' }],
    ['an issuer on plain http', { issuer: 'http://id.example.com' }],
  ])('should throw a TypeError for %s', (_label, changed) => {
    expect(() =>
      protectedResourceMetadata({
        issuer: 'https://id.example.com',
        resource: 'https://mcp.example.com/mcp',
        ...changed,
      }),
    ).toThrow(TypeError);
  });
});

describe('protectedResourceMetadataUrl', () => {
  it.each([
    [
      'https://mcp.example.com/mcp',
      'https://mcp.example.com/.well-known/oauth-protected-resource/mcp',
    ],
    ['https://api.example.com', 'https://api.example.com/.well-known/oauth-protected-resource'],
    ['https://api.example.com/', 'https://api.example.com/.well-known/oauth-protected-resource'],
    [
      'http://localhost:8080/a/b?x=1',
      'http://localhost:8080/.well-known/oauth-protected-resource/a/b?x=1',
    ],
  ])('should put the metadata of %s at %s', (resource, url) => {
    expect(protectedResourceMetadataUrl(resource)).toBe(url);
  });
});
