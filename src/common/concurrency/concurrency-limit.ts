/**
 * At most `max` tasks at a time; the others wait their turn, first come first served. A task
 * that fails frees its place like one that succeeds.
 */
export class ConcurrencyLimit {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly max: number) {
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new RangeError(`A concurrency limit must be a positive integer, not ${max}`);
    }
  }

  /** Tasks started and not yet settled. */
  get active(): number {
    return this.running;
  }

  /** Tasks waiting for a place. */
  get queued(): number {
    return this.waiting.length;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.max) {
      // The place is handed over by the task that leaves, so `running` never drops below max
      // while tasks wait, and no newcomer can overtake them.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running += 1;
    }
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next === undefined) {
        this.running -= 1;
      } else {
        next();
      }
    }
  }
}
