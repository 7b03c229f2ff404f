import type { JwtConfig } from '../../config/app-config.js';
import { jwtKey, signingKey, VerificationKeys } from './jwt-key.js';

const CURRENT = 'c'.repeat(32);
const PREVIOUS = 'p'.repeat(32);
const OLDEST = 'o'.repeat(48);

const config = (secret: string, previousSecrets: string[] = []): JwtConfig => ({
  secret,
  previousSecrets,
  issuer: 'keygate',
  audience: 'keygate-clients',
  accessTokenExpiryMinutes: 15,
  refreshTokenExpiryDays: 7,
  clockSkewSeconds: 0,
  requireActiveSession: false,
  refreshRetryWindowSeconds: 0,
});

describe(jwtKey.name, () => {
  it('should give a secret the same 16-character base64url id every time', () => {
    expect(jwtKey(CURRENT).kid).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(jwtKey(CURRENT).kid).toBe(jwtKey(CURRENT).kid);
  });

  it('should give different secrets different ids, none of them a piece of the secret', () => {
    const kids = [CURRENT, PREVIOUS, OLDEST].map((secret) => jwtKey(secret).kid);

    expect(new Set(kids).size).toBe(3);
    kids.forEach((kid) => expect(CURRENT + PREVIOUS + OLDEST).not.toContain(kid));
  });

  it('should sign with the current secret', () => {
    const key = signingKey(config(CURRENT, [PREVIOUS]));

    expect(key.kid).toBe(jwtKey(CURRENT).kid);
    expect(key.key.export().toString('utf8')).toBe(CURRENT);
  });
});

describe(VerificationKeys.name, () => {
  const sut = new VerificationKeys(config(CURRENT, [PREVIOUS, OLDEST]));
  const secretFor = (header: { kid?: unknown }): string | undefined =>
    sut.forHeader(header)?.export().toString('utf8');

  it.each([
    ['the current', CURRENT],
    ['a previous', PREVIOUS],
    ['the oldest previous', OLDEST],
  ])('should find %s secret by its id', (_label, secret) => {
    expect(secretFor({ kid: jwtKey(secret).kid })).toBe(secret);
  });

  it('should verify a token without an id with the current secret', () => {
    expect(secretFor({})).toBe(CURRENT);
  });

  it.each([
    ['an unknown id', { kid: jwtKey('x'.repeat(32)).kid }],
    ['an empty id', { kid: '' }],
    ['an id that is not a string', { kid: 7 }],
    ['a null id', { kid: null }],
  ])('should find no key for %s', (_label, header) => {
    expect(sut.forHeader(header)).toBeUndefined();
  });
});
