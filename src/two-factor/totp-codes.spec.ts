import { RandomSource } from '../common/random/random-source.js';
import { describe, expect, it } from '@jest/globals';
import {
  classifyCode,
  generateRecoveryCodes,
  generateTotpSecret,
  matchingSteps,
  timeStepAt,
  totpAt,
} from './totp-codes.js';

// RFC 6238 Appendix B: the SHA-1 secret is the ASCII "12345678901234567890".
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';

describe('TOTP codes', () => {
  it.each([
    [59, '287082'],
    [1111111109, '081804'],
    [1111111111, '050471'],
    [1234567890, '005924'],
    [2000000000, '279037'],
  ])('should give the code of RFC 6238 Appendix B at %d s', async (seconds, code) => {
    await expect(totpAt(RFC_SECRET, timeStepAt(new Date(seconds * 1000)))).resolves.toBe(code);
  });

  it('should match the step of the code and one either side, and no other', async () => {
    const at = new Date(1111111111 * 1000);
    const step = timeStepAt(at);
    const codeOf = (offset: number) => totpAt(RFC_SECRET, step + offset);

    for (const offset of [-1, 0, 1]) {
      await expect(matchingSteps(RFC_SECRET, await codeOf(offset), at)).resolves.toEqual([
        step + offset,
      ]);
    }
    for (const offset of [-2, 2]) {
      await expect(matchingSteps(RFC_SECRET, await codeOf(offset), at)).resolves.toEqual([]);
    }
  });

  it('should make 160-bit base32 secrets, each new', () => {
    const secrets = new Set(
      Array.from({ length: 50 }, () => generateTotpSecret(new RandomSource())),
    );

    expect(secrets.size).toBe(50);
    for (const secret of secrets) {
      expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    }
  });

  it.each([
    ['123456', 'totp'],
    [' 123 456 ', 'totp'],
    ['123-456', 'totp'],
    ['abcde-fghjk', 'recovery'],
    ['ABCDEFGHJK', 'recovery'],
    ['12345', 'malformed'],
    ['1234567', 'malformed'],
    ['abcde-fghj', 'malformed'],
    ['abcde_fghjk', 'malformed'],
  ])('should read %j as %s', (code, kind) => {
    expect(classifyCode(code).kind).toBe(kind);
  });

  it('should make ten distinct recovery codes whose digests are what a login computes', () => {
    const { codes, digests } = generateRecoveryCodes(new RandomSource());

    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    codes.forEach((code, i) => {
      expect(code).toMatch(/^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}$/);
      expect(classifyCode(code.toUpperCase())).toEqual({ kind: 'recovery', digest: digests[i] });
    });
  });
});
