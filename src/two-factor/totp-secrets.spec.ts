import { RandomSource } from '../common/random/random-source.js';
import { beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { UnavailableError } from '../common/errors/domain-errors.js';
import type { AppConfig } from '../config/app-config.js';
import { mfaKeyId } from '../config/settings/mfa-settings.js';
import { TotpSecrets } from './totp-secrets.js';

const SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
const USER = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
const OTHER_USER = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const A = Buffer.alloc(32, 1);
const B = Buffer.alloc(32, 2);

function secretsWith(...keys: Buffer[]): TotpSecrets {
  const config = {
    mfa: { issuer: 'Keygate', keys: keys.map((key) => ({ id: mfaKeyId(key), key })) },
  };
  return new TotpSecrets(config as unknown as AppConfig, new RandomSource());
}

describe(TotpSecrets.name, () => {
  let errors: string[];

  beforeEach(() => {
    errors = [];
    jest.spyOn(Logger.prototype, 'error').mockImplementation((message: unknown) => {
      errors.push(String(message));
    });
  });

  it('should seal with the first key, differently each time, and open again', () => {
    const sut = secretsWith(A, B);

    const [first, second] = [sut.seal(USER, SECRET), sut.seal(USER, SECRET)];

    expect(first).not.toBe(second);
    expect(first).not.toContain(SECRET);
    expect(first.split('.')[1]).toBe(mfaKeyId(A));
    expect(sut.open(USER, first)).toBe(SECRET);
  });

  it('should open what an older key sealed while that key is listed', () => {
    const sealed = secretsWith(A).seal(USER, SECRET);

    const sut = secretsWith(B, A);

    expect(sut.open(USER, sealed)).toBe(SECRET);
    expect(sut.isSealedWithOldKey(sealed)).toBe(true);
    expect(() => secretsWith(B).open(USER, sealed)).toThrow(UnavailableError);
  });

  it("should not open a secret copied to another account's row, nor an altered one", () => {
    const sut = secretsWith(A);
    const sealed = sut.seal(USER, SECRET);
    const parts = sealed.split('.');
    parts[4] = Buffer.from('x'.repeat(20)).toString('base64url');

    expect(() => sut.open(OTHER_USER, sealed)).toThrow(UnavailableError);
    expect(() => sut.open(USER, parts.join('.'))).toThrow(UnavailableError);
  });

  it('should answer 503 without a key', () => {
    const sut = secretsWith();

    expect(sut.isConfigured).toBe(false);
    expect(() => sut.seal(USER, SECRET)).toThrow(
      'La verificación en dos pasos no está configurada.',
    );
  });
});
