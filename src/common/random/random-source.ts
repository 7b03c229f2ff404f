import { Injectable } from '@nestjs/common';
import { randomBytes, randomFillSync, randomUUID } from 'node:crypto';

/** Bytes drawn from the CSPRNG at once, then handed out in small pieces. */
export const RANDOM_POOL_BYTES = 4096;

/** Requests larger than this go to the CSPRNG directly; every id and token is far smaller. */
export const POOLED_REQUEST_MAX_BYTES = 64;

/**
 * The only source of randomness: ids, token values, salts, nonces. Backed by the CSPRNG of
 * node:crypto; tests replace it, as they replace Clock, to know the values a rule produces.
 *
 * Small requests are served from a pool filled by one `randomFillSync` call, as node:crypto's
 * own `randomUUID` does: each call of `randomBytes` sets up a crypto job, and with two calls per
 * refresh (the token and the audit row's id) that setup cost more than the bytes. Every byte of
 * the pool is handed out once and wiped from the pool as it is handed out
 * (docs/decisions/0029-request-path-layers.md).
 */
@Injectable()
export class RandomSource {
  private readonly pool = Buffer.alloc(RANDOM_POOL_BYTES);
  /** Where the next unused byte of the pool is; the pool's length means "empty". */
  private offset = RANDOM_POOL_BYTES;

  /** `size` random bytes, in a buffer of their own. */
  bytes(size: number): Buffer {
    if (size > POOLED_REQUEST_MAX_BYTES) {
      return randomBytes(size);
    }
    if (this.offset + size > RANDOM_POOL_BYTES) {
      randomFillSync(this.pool);
      this.offset = 0;
    }
    const end = this.offset + size;
    const taken = Buffer.from(this.pool.subarray(this.offset, end));
    this.pool.fill(0, this.offset, end);
    this.offset = end;
    return taken;
  }

  /** A random (version 4) UUID. */
  uuid(): string {
    return randomUUID();
  }
}
