import { describe, expect, it } from '@jest/globals';
import { ConfigurationError, loadAppConfig } from '../app-config.js';

const SECRET = 'a-test-signing-secret-of-at-least-32-characters';

function load(environment: Record<string, string>, mode = 'production') {
  return loadAppConfig({ Jwt__SecretKey: SECRET, NODE_ENV: mode, ...environment });
}

function problemOf(environment: Record<string, string>, mode = 'production'): string {
  try {
    load(environment, mode);
  } catch (error: unknown) {
    if (error instanceof ConfigurationError) {
      return error.message;
    }
    throw error;
  }
  throw new Error('the configuration was accepted');
}

describe('Passkeys__ settings', () => {
  it('should leave passkeys off when neither the id nor the origins are set', () => {
    expect(load({}).passkeys).toBeNull();
  });

  it('should normalise the id and the origins, and keep each origin once', () => {
    const config = load({
      Passkeys__RpId: ' Example.COM ',
      Passkeys__RpName: ' Acme ',
      Passkeys__Origins:
        'https://App.Example.com:443/, https://example.com, https://app.example.com',
    });

    expect(config.passkeys).toEqual({
      rpId: 'example.com',
      rpName: 'Acme',
      origins: ['https://app.example.com', 'https://example.com'],
    });
  });

  it.each([
    [{ Passkeys__RpId: 'localhost', Passkeys__Origins: 'http://localhost:5173' }, 'production'],
    [{ Passkeys__RpId: 'app.localhost', Passkeys__Origins: 'http://app.localhost' }, 'production'],
    [{ Passkeys__RpId: 'example.test', Passkeys__Origins: 'http://example.test' }, 'development'],
  ])('should accept %j in %s', (environment, mode) => {
    expect(load(environment, mode).passkeys).not.toBeNull();
  });

  it.each([
    [
      { Passkeys__Origins: 'https://example.com' },
      'Passkeys__Origins is set but Passkeys__RpId is not; set both, or neither',
    ],
    [
      { Passkeys__RpId: 'example.com' },
      'Passkeys__RpId is set but Passkeys__Origins is empty; list the exact origins',
    ],
    [
      { Passkeys__RpId: 'https://example.com', Passkeys__Origins: 'https://example.com' },
      'Passkeys__RpId: "https://example.com" is not a domain name (no scheme, port or path)',
    ],
    [
      { Passkeys__RpId: 'example.com', Passkeys__Origins: 'https://example.com/login' },
      'Passkeys__Origins: "https://example.com/login" is not an origin',
    ],
    [
      { Passkeys__RpId: 'example.com', Passkeys__Origins: 'https://example.com.evil.net' },
      'Passkeys__Origins: "https://example.com.evil.net" is not on example.com or a subdomain of it',
    ],
    [
      { Passkeys__RpId: 'example.com', Passkeys__Origins: 'https://notexample.com' },
      'Passkeys__Origins: "https://notexample.com" is not on example.com or a subdomain of it',
    ],
    [
      { Passkeys__RpId: 'example.com', Passkeys__Origins: 'http://app.example.com' },
      'Passkeys__Origins: "http://app.example.com" is http, which is refused in production except on localhost',
    ],
  ])('should refuse %j', (environment, problem) => {
    expect(problemOf(environment)).toContain(problem);
  });
});
