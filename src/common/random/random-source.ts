import { Injectable } from '@nestjs/common';
import { randomBytes, randomUUID } from 'node:crypto';

/**
 * The only source of randomness: ids, token values, salts, nonces. Backed by the CSPRNG of
 * node:crypto; tests replace it, as they replace Clock, to know the values a rule produces.
 */
@Injectable()
export class RandomSource {
  /** `size` random bytes. */
  bytes(size: number): Buffer {
    return randomBytes(size);
  }

  /** A random (version 4) UUID. */
  uuid(): string {
    return randomUUID();
  }
}
