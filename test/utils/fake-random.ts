import { RandomSource } from '../../src/common/random/random-source.js';

/**
 * A RandomSource whose values a test can write down: each call takes the next number of one
 * counter, from 1. `uuid()` is `00000000-0000-4000-8000-<counter, 12 hex digits>`; `bytes(n)` is
 * n bytes holding the counter, big-endian, in the last of them (zeros before).
 */
export class SequenceRandomSource extends RandomSource {
  private counter = 0;

  override bytes(size: number): Buffer {
    const bytes = Buffer.alloc(Math.max(size, 6));
    bytes.writeUIntBE(this.next(), bytes.length - 6, 6);
    return bytes.subarray(bytes.length - size);
  }

  override uuid(): string {
    return `00000000-0000-4000-8000-${this.next().toString(16).padStart(12, '0')}`;
  }

  private next(): number {
    this.counter += 1;
    return this.counter;
  }
}
