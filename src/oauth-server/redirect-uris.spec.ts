import { describe, expect, it } from '@jest/globals';
import { isRegistrableRedirectUri, matchesRegisteredRedirectUri } from './redirect-uris.js';

describe('redirect URIs', () => {
  it.each([
    'https://app.example.com/callback',
    'https://app.example.com:8443/cb?x=1',
    'http://127.0.0.1/callback',
    'http://[::1]:8080/callback',
    'http://localhost:3000/callback',
    'com.example.app:/oauth2redirect',
  ])('should accept %s for registration', (uri) => {
    expect(isRegistrableRedirectUri(uri)).toBe(true);
  });

  it.each([
    ['', 'empty'],
    ['/callback', 'relative'],
    ['http://app.example.com/callback', 'http away from loopback'],
    ['https://app.example.com/callback#x', 'a fragment'],
    ['https://user:pw@app.example.com/cb', 'credentials'],
    ['javascript:alert(1)', 'a script scheme'],
    ['data:text/html,hi', 'a data scheme'],
    ['myapp:/callback', 'a private scheme without a dot'],
    ['https://app.example.com/a b', 'white space'],
    [`https://app.example.com/${'a'.repeat(2048)}`, 'too long'],
  ])('should refuse %s for registration (%s)', (uri) => {
    expect(isRegistrableRedirectUri(uri)).toBe(false);
  });

  const registered = ['https://app.example.com/callback', 'http://127.0.0.1/callback'];

  it('should match a registered URI exactly', () => {
    expect(matchesRegisteredRedirectUri(registered[0], registered, false)).toBe(true);
  });

  it.each([
    ['https://app.example.com/callback/', 'a trailing slash'],
    ['https://app.example.com/callbackx', 'a longer path (no prefix match)'],
    ['https://app.example.com/Callback', 'another case of the path'],
    ['https://APP.example.com/callback', 'another case of the host (no folding)'],
    ['https://app.example.com/callback?x=1', 'an added query'],
    ['https://app.example.com:443/callback', 'an explicit default port'],
    ['https://evil.example.com/callback', 'another host'],
    ['https://app.example.com.evil.com/callback', 'a suffixed host'],
  ])('should refuse %s (%s)', (uri) => {
    expect(matchesRegisteredRedirectUri(uri, registered, true)).toBe(false);
  });

  it('should let a public (native) client return to any port of a loopback IP literal', () => {
    expect(matchesRegisteredRedirectUri('http://127.0.0.1:51234/callback', registered, true)).toBe(
      true,
    );
    expect(matchesRegisteredRedirectUri('http://127.0.0.1:51234/other', registered, true)).toBe(
      false,
    );
    expect(matchesRegisteredRedirectUri('http://[::1]:51234/callback', registered, true)).toBe(
      false,
    );
  });

  it('should keep the port exact for a confidential client', () => {
    expect(matchesRegisteredRedirectUri('http://127.0.0.1:51234/callback', registered, false)).toBe(
      false,
    );
  });
});
