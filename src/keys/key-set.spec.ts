import { jwtKey } from '../common/jwt/jwt-key.js';
import { RandomSource } from '../common/random/random-source.js';
import { Clock } from '../common/time/clock.js';
import type { AppConfig } from '../config/app-config.js';
import { encryptionKeyId } from '../config/settings/encryption-keys.js';
import { SigningKey } from './entities/signing-key.entity.js';
import { generateKeyMaterial } from './key-material.js';
import { KeySet } from './key-set.js';

const CURRENT = 'c'.repeat(32);
const PREVIOUS = 'p'.repeat(32);
const OLDEST = 'o'.repeat(48);
const T0 = new Date('2026-01-01T00:00:00.000Z');
const SEAL_KEY = Buffer.alloc(32, 3);

class StillClock extends Clock {
  constructor(private readonly at: Date) {
    super();
  }
  override now(): Date {
    return new Date(this.at);
  }
}

function keySet(signingAlgorithm: 'HS256' | 'ES256' = 'HS256', at = T0): KeySet {
  const config = {
    jwt: {
      secret: CURRENT,
      previousSecrets: [PREVIOUS, OLDEST],
      accessTokenExpiryMinutes: 15,
      clockSkewSeconds: 0,
    },
    keys: {
      signingAlgorithm,
      encryptionKeys: [{ id: encryptionKeyId('test', SEAL_KEY), key: SEAL_KEY }],
    },
  } as unknown as AppConfig;
  return new KeySet(config, new StillClock(at), new RandomSource());
}

describe(KeySet.name, () => {
  describe('the secrets of the configuration', () => {
    const sut = keySet();
    const secretOf = (kid: unknown): string | undefined =>
      sut.verificationKey(kid)?.key.export().toString('utf8');

    it.each([
      ['the current', CURRENT],
      ['a previous', PREVIOUS],
      ['the oldest previous', OLDEST],
    ])('should find %s secret by its id, for HS256 only', (_label, secret) => {
      expect(secretOf(jwtKey(secret).kid)).toBe(secret);
      expect(sut.verificationKey(jwtKey(secret).kid)?.algorithm).toBe('HS256');
    });

    it('should verify a token without an id with the current secret', () => {
      expect(secretOf(undefined)).toBe(CURRENT);
    });

    it.each([
      ['an unknown id', jwtKey('x'.repeat(32)).kid],
      ['an empty id', ''],
      ['an id that is not a string', 7],
      ['a null id', null],
    ])('should find no key for %s', (_label, kid) => {
      expect(sut.verificationKey(kid)).toBeUndefined();
    });

    it('should forget a secret retired by its id, and sign with it under HS256 all the same', () => {
      const retired = keySet();
      retired.load([
        Object.assign(new SigningKey(), {
          kid: jwtKey(PREVIOUS).kid,
          algorithm: 'HS256',
          source: 'secret',
          publicKey: null,
          privateKey: null,
          createdAt: T0,
          activatesAt: null,
          retiredAt: T0,
        }),
      ]);

      expect(retired.verificationKey(jwtKey(PREVIOUS).kid)).toBeUndefined();
      expect(retired.verificationKey(jwtKey(CURRENT).kid)).toBeDefined();
      expect(retired.signer()).toBeNull();
      expect(retired.jwks()).toEqual({ keys: [] });
    });
  });

  describe('a key of the table', () => {
    it('should sign with the current key, verify only its algorithm, and publish its public half', async () => {
      const sut = keySet('ES256');
      const material = await generateKeyMaterial('ES256');
      sut.load([
        Object.assign(new SigningKey(), {
          kid: material.kid,
          algorithm: 'ES256',
          source: 'generated',
          publicKey: JSON.stringify(material.publicJwk),
          privateKey: sut.seal(material.kid, material.privatePem),
          createdAt: T0,
          activatesAt: T0,
          retiredAt: null,
        }),
      ]);

      expect(sut.signer()).toMatchObject({ kid: material.kid, algorithm: 'ES256' });
      expect(sut.signer()?.privateKey.type).toBe('private');
      expect(sut.verificationKey(material.kid)).toMatchObject({ algorithm: 'ES256' });
      expect(sut.verificationKey(material.kid)?.key.type).toBe('public');
      expect(sut.jwks()).toEqual({
        keys: [{ ...material.publicJwk, kid: material.kid, alg: 'ES256', use: 'sig' }],
      });
      expect(sut.currentKey()).toEqual({ algorithm: 'ES256', createdAt: T0 });
    });
  });
});
