import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

const INFO = 'keygate oauth-server forms';

/**
 * The CSRF token of the hosted pages' forms: an HMAC of the interaction's id under a key derived
 * from Jwt__SecretKey (HKDF), so every instance computes the same one and nothing is stored. A
 * form is accepted only with the token of its own interaction, which the interaction cookie
 * (SameSite=Lax, HttpOnly) binds to the browser that started it; a page elsewhere can neither
 * read the token nor compute it.
 */
export class FormTokens {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = Buffer.from(hkdfSync('sha256', secret, '', INFO, 32));
  }

  of(interactionId: string): string {
    return createHmac('sha256', this.key).update(interactionId).digest('base64url');
  }

  /** Whether `presented` is the token of `interactionId`, compared in constant time. */
  accepts(interactionId: string, presented: unknown): boolean {
    if (typeof presented !== 'string') {
      return false;
    }
    const expected = Buffer.from(this.of(interactionId));
    const given = Buffer.from(presented);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}
