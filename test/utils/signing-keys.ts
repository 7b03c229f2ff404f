/** A Keys__EncryptionKeys value for tests: the base64 of 32 bytes. */
export const KEYS_ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');

/** The environment of an instance that signs with `algorithm` (ES256, EdDSA, RS256). */
export function asymmetricSigning(
  algorithm: string,
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  return { Jwt__SigningAlgorithm: algorithm, Keys__EncryptionKeys: KEYS_ENCRYPTION_KEY, ...extra };
}
