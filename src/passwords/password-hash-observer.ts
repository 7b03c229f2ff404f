export type PasswordHashOperation = 'hash' | 'verify';

/**
 * Told how long each PBKDF2 derivation took, so metrics can watch the most expensive step of a
 * login without PasswordHasher knowing about them. Optional: without one, nothing is timed.
 */
export abstract class PasswordHashObserver {
  abstract observe(operation: PasswordHashOperation, seconds: number): void;
}
