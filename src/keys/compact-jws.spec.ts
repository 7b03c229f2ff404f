import { decodeProtectedHeader, jwtVerify } from 'jose';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { signCompactJws } from './compact-jws.js';
import type { AsymmetricAlgorithm } from './key-material.js';

function pairOf(algorithm: AsymmetricAlgorithm): { privateKey: KeyObject; publicKey: KeyObject } {
  switch (algorithm) {
    case 'ES256':
      return generateKeyPairSync('ec', { namedCurve: 'P-256' });
    case 'EdDSA':
      return generateKeyPairSync('ed25519');
    case 'RS256':
      return generateKeyPairSync('rsa', { modulusLength: 2048 });
  }
}

const CLAIMS = { sub: 'user-1', sid: 'session-1', iss: 'keygate', aud: 'api', iat: 1, exp: 4e9 };

describe('signCompactJws', () => {
  // The signature length says the encoding: r‖s of P-256 is 64 bytes (DER would be 70 to 72).
  it.each([
    ['ES256', 64],
    ['EdDSA', 64],
    ['RS256', 256],
  ] as const)('signs %s tokens that jose verifies with the public key', async (alg, bytes) => {
    const { privateKey, publicKey } = pairOf(alg);

    const token = signCompactJws({ alg, typ: 'JWT', kid: 'kid-1' }, CLAIMS, privateKey);

    const { payload, protectedHeader } = await jwtVerify(token, publicKey, {
      algorithms: [alg],
    });
    expect(protectedHeader).toEqual({ alg, typ: 'JWT', kid: 'kid-1' });
    expect(payload).toEqual(CLAIMS);
    expect(token.split('.')).toHaveLength(3);
    expect(Buffer.from(token.split('.')[2], 'base64url')).toHaveLength(bytes);
    expect(token).not.toMatch(/[=+/]/);
  });

  it.each(['ES256', 'EdDSA', 'RS256'] as const)(
    'signs %s tokens that another key of the algorithm does not verify',
    async (alg) => {
      const token = signCompactJws(
        { alg, typ: 'JWT', kid: 'kid-1' },
        CLAIMS,
        pairOf(alg).privateKey,
      );

      await expect(
        jwtVerify(token, pairOf(alg).publicKey, { algorithms: [alg] }),
      ).rejects.toMatchObject({ code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
      expect(decodeProtectedHeader(token).kid).toBe('kid-1');
    },
  );

  // A refresh retried within Jwt__RefreshRetryWindowSeconds signs the same claims again and
  // answers the same pair: byte for byte under the deterministic algorithms.
  it.each([
    ['EdDSA', true],
    ['RS256', true],
    ['ES256', false],
  ] as const)('signs the same claims with %s to the same token: %s', (alg, same) => {
    const { privateKey } = pairOf(alg);
    const header = { alg, typ: 'JWT', kid: 'kid-1' } as const;

    const first = signCompactJws(header, CLAIMS, privateKey);
    const second = signCompactJws(header, CLAIMS, privateKey);

    expect(first === second).toBe(same);
    expect(first.split('.').slice(0, 2)).toEqual(second.split('.').slice(0, 2));
  });

  it('fails, without a token, when the key is not of the algorithm', () => {
    expect(() =>
      signCompactJws({ alg: 'ES256', typ: 'JWT', kid: 'k' }, CLAIMS, pairOf('EdDSA').privateKey),
    ).toThrow();
  });
});
