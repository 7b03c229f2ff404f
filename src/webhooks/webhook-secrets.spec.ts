import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { SealedBox } from '../common/crypto/sealed-box.js';
import { RandomSource } from '../common/random/random-source.js';
import type { AppConfig } from '../config/app-config.js';
import { encryptionKeyId } from '../config/settings/encryption-keys.js';
import { WebhookSecrets } from './webhook-secrets.js';

const SUBSCRIPTION = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
const OTHER_SUBSCRIPTION = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const KEY = Buffer.alloc(32, 1);

function secretsWith(...keys: Buffer[]): WebhookSecrets {
  const config = {
    webhooks: { keys: keys.map((key) => ({ id: encryptionKeyId('webhooks', key), key })) },
  };
  return new WebhookSecrets(config as unknown as AppConfig, new RandomSource());
}

/** The sealed value with the first character of its ciphertext changed. */
function altered(sealed: string): string {
  const parts = sealed.split('.');
  const text = parts[4] ?? '';
  parts[4] = `${text.startsWith('A') ? 'B' : 'A'}${text.slice(1)}`;
  return parts.join('.');
}

describe(WebhookSecrets.name, () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('should open a sealed secret once and answer later opens of the same value from memory', () => {
    const sut = secretsWith(KEY);
    const sealed = sut.seal(SUBSCRIPTION, 'whsec_first');
    const decrypt = jest.spyOn(SealedBox.prototype, 'open');

    expect(sut.open(SUBSCRIPTION, sealed)).toBe('whsec_first');
    expect(sut.open(SUBSCRIPTION, sealed)).toBe('whsec_first');

    expect(decrypt).toHaveBeenCalledTimes(1);
  });

  it('should open a changed sealed value of the same subscription anew', () => {
    const sut = secretsWith(KEY);
    const first = sut.seal(SUBSCRIPTION, 'whsec_first');
    const rotated = sut.seal(SUBSCRIPTION, 'whsec_rotated');
    const decrypt = jest.spyOn(SealedBox.prototype, 'open');

    expect(sut.open(SUBSCRIPTION, first)).toBe('whsec_first');
    expect(sut.open(SUBSCRIPTION, rotated)).toBe('whsec_rotated');
    expect(sut.open(SUBSCRIPTION, first)).toBe('whsec_first');

    expect(decrypt).toHaveBeenCalledTimes(3);
  });

  it('should answer null for a value that does not open, every time, even after it opened for its own subscription', () => {
    const sut = secretsWith(KEY);
    const sealed = sut.seal(SUBSCRIPTION, 'whsec_first');
    expect(sut.open(SUBSCRIPTION, sealed)).toBe('whsec_first');

    expect(sut.open(OTHER_SUBSCRIPTION, sealed)).toBeNull();
    expect(sut.open(OTHER_SUBSCRIPTION, sealed)).toBeNull();
    expect(sut.open(SUBSCRIPTION, altered(sealed))).toBeNull();
    expect(secretsWith(Buffer.alloc(32, 2)).open(SUBSCRIPTION, sealed)).toBeNull();
  });
});
