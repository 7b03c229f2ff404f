import { Injectable } from '@nestjs/common';
import { Clock } from '../common/time/clock.js';
import { SigningKeyObserver, type SigningKeyInUse } from '../keys/signing-key-observer.js';
import { KeygateMetrics } from './keygate-metrics.js';

/**
 * Feeds `keygate_signing_key_age_seconds` (KeygateMetrics): how old the key that signs access
 * tokens is, read at scrape time, so an alert can ask for a rotation. No sample while the HS256
 * secret signs: the service does not know when a secret was made.
 */
@Injectable()
export class SigningKeyMetrics extends SigningKeyObserver {
  constructor(
    private readonly metrics: KeygateMetrics,
    private readonly clock: Clock,
  ) {
    super();
  }

  watch(current: () => SigningKeyInUse | null): void {
    this.metrics.signingKey = () => {
      const key = current();
      return key === null
        ? null
        : {
            algorithm: key.algorithm,
            ageSeconds: (this.clock.now().getTime() - key.createdAt.getTime()) / 1000,
          };
    };
  }
}
