/**
 * The canonical form of an e-mail address, used both to store it and to look it up, so that
 * `Alice@Example.com` and `alice@example.com` are one account.
 */
export function normalizeEmail(email: string): string {
  return email.trim().normalize('NFC').toLowerCase();
}
