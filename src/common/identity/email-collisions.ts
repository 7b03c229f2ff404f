import { normalizeEmail } from './email.js';

/** An account as the collision check reads it. */
export interface StoredEmail {
  readonly id: string;
  readonly email: string;
}

/** Accounts whose stored addresses share one canonical form: they cannot all keep it. */
export interface EmailCollision<T extends StoredEmail = StoredEmail> {
  readonly canonical: string;
  /** In the order they were given. */
  readonly accounts: readonly T[];
}

/** The groups of two or more accounts whose addresses normalise to the same canonical form. */
export function emailCollisions<T extends StoredEmail>(accounts: Iterable<T>): EmailCollision<T>[] {
  const byCanonical = new Map<string, T[]>();
  for (const account of accounts) {
    const canonical = normalizeEmail(account.email);
    const group = byCanonical.get(canonical);
    if (group === undefined) {
      byCanonical.set(canonical, [account]);
    } else {
      group.push(account);
    }
  }
  return [...byCanonical]
    .filter(([, group]) => group.length > 1)
    .map(([canonical, group]) => ({ canonical, accounts: group }));
}
