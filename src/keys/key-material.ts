import { calculateJwkThumbprint } from 'jose';
import { createPrivateKey, createPublicKey, generateKeyPair, type KeyObject } from 'node:crypto';
import type { SigningAlgorithm } from '../config/environment-variables.js';

/** The algorithms of the key set; HS256 stays with Jwt__SecretKey. */
export type AsymmetricAlgorithm = Exclude<SigningAlgorithm, 'HS256'>;

/** RSA keys shorter than this are refused on import (NIST SP 800-57: 112-bit security). */
export const MIN_RSA_BITS = 2048;

/** The members a published JWK may carry besides its key members (RFC 7517 §4). */
export interface PublicJwk {
  readonly kty: string;
  readonly crv?: string;
  readonly x?: string;
  readonly y?: string;
  readonly n?: string;
  readonly e?: string;
}

/** A key pair as the key set stores it: its id, algorithm, public JWK and private PEM. */
export interface KeyMaterial {
  /** RFC 7638 thumbprint of the public key. */
  readonly kid: string;
  readonly algorithm: AsymmetricAlgorithm;
  readonly publicJwk: PublicJwk;
  /** PKCS#8 PEM; sealed before it is stored, never logged or returned. */
  readonly privatePem: string;
}

/** Why a PEM cannot be a signing key; the text never quotes the PEM. */
export class UnusableKeyError extends Error {
  constructor(readonly reason: UnusableKeyReason) {
    super(`The key cannot sign: ${reason}`);
    this.name = 'UnusableKeyError';
  }
}

export type UnusableKeyReason = 'not_a_private_key' | 'unsupported_type' | 'rsa_too_short';

/**
 * A new key pair for `algorithm`: P-256, Ed25519, or RSA of 2048 bits, generated on libuv's pool
 * (an RSA key takes a tenth of a second, which the event loop should not wait for).
 */
export async function generateKeyMaterial(algorithm: AsymmetricAlgorithm): Promise<KeyMaterial> {
  const privateKey = await new Promise<KeyObject>((resolve, reject) => {
    const done = (error: Error | null, _publicKey: KeyObject, key: KeyObject): void =>
      error === null ? resolve(key) : reject(error);
    if (algorithm === 'ES256') {
      generateKeyPair('ec', { namedCurve: 'P-256' }, done);
    } else if (algorithm === 'EdDSA') {
      generateKeyPair('ed25519', {}, done);
    } else {
      generateKeyPair('rsa', { modulusLength: MIN_RSA_BITS }, done);
    }
  });
  return materialOf(privateKey, algorithm);
}

/**
 * The key of a PEM private key (PKCS#8, SEC1 or PKCS#1, unencrypted): a P-256 key signs ES256, an
 * Ed25519 key EdDSA, an RSA key of 2048 bits or more RS256. Anything else is refused.
 */
export function keyMaterialFromPem(pem: string): Promise<KeyMaterial> {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    throw new UnusableKeyError('not_a_private_key');
  }
  return materialOf(privateKey, algorithmOf(privateKey));
}

function algorithmOf(key: KeyObject): AsymmetricAlgorithm {
  const details = key.asymmetricKeyDetails;
  if (key.asymmetricKeyType === 'ec' && details?.namedCurve === 'prime256v1') {
    return 'ES256';
  }
  if (key.asymmetricKeyType === 'ed25519') {
    return 'EdDSA';
  }
  if (key.asymmetricKeyType === 'rsa') {
    if ((details?.modulusLength ?? 0) < MIN_RSA_BITS) {
      throw new UnusableKeyError('rsa_too_short');
    }
    return 'RS256';
  }
  throw new UnusableKeyError('unsupported_type');
}

async function materialOf(
  privateKey: KeyObject,
  algorithm: AsymmetricAlgorithm,
): Promise<KeyMaterial> {
  const publicJwk = publicMembers(createPublicKey(privateKey).export({ format: 'jwk' }));
  return {
    kid: await calculateJwkThumbprint(publicJwk, 'sha256'),
    algorithm,
    publicJwk,
    privatePem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  };
}

/** Only the key members of a public JWK: whatever else an export holds is left behind. */
export function publicMembers(jwk: Record<string, unknown>): PublicJwk {
  const pick = (name: string): Record<string, string> =>
    typeof jwk[name] === 'string' ? { [name]: jwk[name] } : {};
  switch (jwk.kty) {
    case 'EC':
      return { kty: 'EC', ...pick('crv'), ...pick('x'), ...pick('y') };
    case 'OKP':
      return { kty: 'OKP', ...pick('crv'), ...pick('x') };
    case 'RSA':
      return { kty: 'RSA', ...pick('n'), ...pick('e') };
    default:
      throw new UnusableKeyError('unsupported_type');
  }
}

/** The public KeyObject of a stored public JWK. */
export function publicKeyOf(jwk: PublicJwk): KeyObject {
  return createPublicKey({ key: { ...jwk }, format: 'jwk' });
}

/** The private KeyObject of an opened PEM. */
export function privateKeyOf(pem: string): KeyObject {
  return createPrivateKey({ key: pem, format: 'pem' });
}
