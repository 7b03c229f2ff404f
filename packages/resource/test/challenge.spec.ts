import { challenge } from '../src/index.js';

const METADATA = 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp';

describe('challenge', () => {
  it.each([
    [
      'a request without a token',
      { resourceMetadataUrl: METADATA },
      `Bearer resource_metadata="${METADATA}"`,
    ],
    [
      'a request without a token, naming the scopes to ask for',
      { resourceMetadataUrl: METADATA, scope: ['files:read'] },
      `Bearer scope="files:read", resource_metadata="${METADATA}"`,
    ],
    [
      'a refused token',
      { resourceMetadataUrl: METADATA, error: 'invalid_token' as const },
      `Bearer error="invalid_token", resource_metadata="${METADATA}"`,
    ],
    [
      'a token without the scopes needed',
      {
        resourceMetadataUrl: METADATA,
        error: 'insufficient_scope' as const,
        scope: ['files:read', 'files:write'],
      },
      `Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="${METADATA}"`,
    ],
    [
      'scopes given as a string, with a description',
      {
        resourceMetadataUrl: METADATA,
        error: 'insufficient_scope' as const,
        scope: 'files:write',
        errorDescription: 'Writing needs files:write.',
      },
      `Bearer error="insufficient_scope", scope="files:write", resource_metadata="${METADATA}", error_description="Writing needs files:write."`,
    ],
  ])('should answer %s', (_label, options, expected) => {
    expect(challenge(options)).toBe(expected);
  });

  it.each([
    ['insufficient_scope without scopes', { error: 'insufficient_scope' as const }],
    ['insufficient_scope with an empty list', { error: 'insufficient_scope' as const, scope: [] }],
    ['a scope with a quote', { scope: ['files"read'] }],
    ['a scope with a space inside a list item', { scope: ['files:read files:write'] }],
    ['a description with a line break', { errorDescription: 'a\r\nSet-Cookie: x=1' }],
    ['a description with a quote', { errorDescription: 'say "hi"' }],
    ['an error RFC 6750 does not answer with', { error: 'invalid_request' as 'invalid_token' }],
    ['a relative metadata URL', { resourceMetadataUrl: '/.well-known/oauth-protected-resource' }],
    ['a metadata URL with a backslash', { resourceMetadataUrl: `${METADATA}?a\\b` }],
  ])('should throw a TypeError for %s', (_label, changed) => {
    expect(() => challenge({ resourceMetadataUrl: METADATA, ...changed })).toThrow(TypeError);
  });
});
