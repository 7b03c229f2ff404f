import { Injectable } from '@nestjs/common';

/** The only source of "now". Tests replace it to move time without sleeping. */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }

  /** Resolves after `ms` milliseconds; a fake clock moves on at once instead. */
  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      setTimeout(resolve, ms);
    });
  }
}
