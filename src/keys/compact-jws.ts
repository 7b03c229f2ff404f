import { sign, type KeyObject, type SignKeyObjectInput } from 'node:crypto';
import type { AsymmetricAlgorithm } from './key-material.js';

/** What OpenSSL is asked for, per algorithm of the key set (RFC 7518 §3, RFC 8037 §3.1). */
const SIGNATURES: Readonly<
  Record<AsymmetricAlgorithm, { readonly digest: string | null; readonly ecdsa: boolean }>
> = {
  // ECDSA over P-256 with SHA-256; JWS wants r‖s (IEEE P1363), not OpenSSL's DER.
  ES256: { digest: 'sha256', ecdsa: true },
  // Ed25519 hashes internally: no digest is named.
  EdDSA: { digest: null, ecdsa: false },
  // RSASSA-PKCS1-v1_5 with SHA-256, OpenSSL's default padding for an `rsa` key.
  RS256: { digest: 'sha256', ecdsa: false },
};

function base64url(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/**
 * A JWS in compact serialization (RFC 7515 §7.1): `header.payload.signature`, base64url without
 * padding, the signature computed by node:crypto's one-shot sign on the event loop. jose's
 * WebCrypto path cost the loop 70 to 90 µs a token and libuv's pool a round trip that slowed
 * SQLite's group commits; this costs the 40 to 60 µs of the signature (decision 0036).
 */
export function signCompactJws(
  header: { readonly alg: AsymmetricAlgorithm; readonly typ: 'JWT'; readonly kid: string },
  payload: object,
  privateKey: KeyObject,
): string {
  const signingInput = `${base64url(header)}.${base64url(payload)}`;
  const { digest, ecdsa } = SIGNATURES[header.alg];
  const key: KeyObject | SignKeyObjectInput = ecdsa
    ? { key: privateKey, dsaEncoding: 'ieee-p1363' }
    : privateKey;
  return `${signingInput}.${sign(digest, Buffer.from(signingInput), key).toString('base64url')}`;
}
