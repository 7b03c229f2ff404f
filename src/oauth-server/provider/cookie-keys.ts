import { hkdfSync } from 'node:crypto';

const INFO = 'keygate oauth-server cookies';

/**
 * The keys that sign the provider's cookies (its browser session, the interaction in progress),
 * derived from Jwt__SecretKey and then from each of Jwt__PreviousSecretKeys: every instance
 * derives the same ones without another setting, and rotating the secret the usual way keeps the
 * cookies of the previous secret valid until it is dropped. A derived key reveals nothing of the
 * secret it comes from (HKDF, RFC 5869).
 */
export function cookieKeysOf(secret: string, previousSecrets: readonly string[]): string[] {
  return [secret, ...previousSecrets].map((value) =>
    Buffer.from(hkdfSync('sha256', value, '', INFO, 32)).toString('base64url'),
  );
}
