import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { Clock } from '../common/time/clock.js';
import { SigningKeyObserver } from '../keys/signing-key-observer.js';
import { KeygateMetrics } from './keygate-metrics.js';

/**
 * `keygate_signing_key_age_seconds`: how old the key that signs access tokens is, read at scrape
 * time, so an alert can ask for a rotation. No sample while the HS256 secret signs: the service
 * does not know when a secret was made.
 */
@Injectable()
export class SigningKeyMetrics extends SigningKeyObserver {
  private createdAtOfCurrent: () => Date | null = () => null;

  constructor(metrics: KeygateMetrics, clock: Clock) {
    super();
    if (!metrics.enabled) {
      return;
    }
    const source = (): Date | null => this.createdAtOfCurrent();
    new Gauge({
      name: 'keygate_signing_key_age_seconds',
      help: 'Age in seconds of the key that signs access tokens (since it was made or imported); absent while the HS256 secret signs.',
      registers: [metrics.registry],
      collect() {
        this.reset();
        const createdAt = source();
        if (createdAt !== null) {
          this.set((clock.now().getTime() - createdAt.getTime()) / 1000);
        }
      },
    });
  }

  watch(createdAtOfCurrent: () => Date | null): void {
    this.createdAtOfCurrent = createdAtOfCurrent;
  }
}
