import { Clock } from '../../src/common/time/clock.js';

/** A Clock that stands still until a test moves it. */
export class FakeClock extends Clock {
  private current: Date;

  constructor(start = new Date('2026-01-01T00:00:00.000Z')) {
    super();
    this.current = new Date(start);
  }

  override now(): Date {
    return new Date(this.current);
  }

  /** Moves the clock on by `ms` and resolves at once: nothing really waits. */
  override wait(ms: number): Promise<void> {
    this.advance(ms);
    return Promise.resolve();
  }

  set(instant: Date): void {
    this.current = new Date(instant);
  }

  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}
