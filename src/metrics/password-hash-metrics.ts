import { Injectable } from '@nestjs/common';
import type { Histogram } from 'prom-client';
import {
  PasswordHashObserver,
  type PasswordHashOperation,
} from '../passwords/password-hash-observer.js';
import { KeygateMetrics } from './keygate-metrics.js';

type Timer = ReturnType<Histogram<'operation'>['labels']>;

/** Feeds PasswordHasher's timings into the hash-duration histogram. */
@Injectable()
export class PasswordHashMetrics extends PasswordHashObserver {
  /** Bound once, so an observation does no label lookup. */
  private readonly timers: Readonly<Record<PasswordHashOperation, Timer>> | undefined;

  constructor(metrics: KeygateMetrics) {
    super();
    const duration = metrics.passwordHashDuration;
    this.timers = metrics.enabled
      ? {
          hash: duration.labels({ operation: 'hash' }),
          verify: duration.labels({ operation: 'verify' }),
        }
      : undefined;
  }

  observe(operation: PasswordHashOperation, seconds: number): void {
    this.timers?.[operation].observe(seconds);
  }
}
