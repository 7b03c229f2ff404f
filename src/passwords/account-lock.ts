import { Injectable } from '@nestjs/common';

/**
 * Runs login attempts for one account one at a time, from reading the account to writing its
 * counters. Without it, N parallel guesses would all be checked against the same counter and
 * all get a verdict before any lockout is written. No database transaction is held meanwhile.
 */
@Injectable()
export class AccountLock {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await result;
    } finally {
      // Forget the key once nobody is queued behind us, so the map does not grow per account.
      if (this.tails.get(key) === tail) {
        this.tails.delete(key);
      }
    }
  }
}
