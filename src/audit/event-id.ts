import type { RandomSource } from '../common/random/random-source.js';

const RANDOM_BITS = 74n;
/** The largest instant an id's 48 bits of milliseconds hold. */
const MAX_EVENT_ID_MS = 2 ** 48 - 1;
const RANDOM_MAX = (1n << RANDOM_BITS) - 1n;

/**
 * UUIDv7 ids (RFC 9562): 48 bits of milliseconds, then 74 random bits. Within one process the
 * ids only grow: an id for the same millisecond (or an earlier one, if the clock stepped back)
 * is the previous one plus one. Ordering by `occurredAt, id` therefore keeps the order in which
 * events were told, even when several share a millisecond.
 */
export class EventIdGenerator {
  private lastMs = -1;
  private lastRandom = 0n;

  constructor(private readonly random: RandomSource) {}

  next(at: Date): string {
    let ms = at.getTime();
    if (ms > this.lastMs) {
      // The top random bit starts at 0, so a burst has 2^73 increments before it overflows.
      this.lastRandom = BigInt(`0x${this.random.bytes(10).toString('hex')}`) & (RANDOM_MAX >> 1n);
    } else {
      ms = this.lastMs;
      this.lastRandom += 1n;
      if (this.lastRandom > RANDOM_MAX) {
        ms += 1;
        this.lastRandom = 0n;
      }
    }
    this.lastMs = ms;
    return format(ms, this.lastRandom);
  }
}

function format(ms: number, random: bigint): string {
  const randA = (random >> 62n) & 0xfffn;
  const randB = random & ((1n << 62n) - 1n);
  const hex =
    BigInt(ms).toString(16).padStart(12, '0') +
    (0x7000n | randA).toString(16).padStart(4, '0') +
    ((2n << 62n) | randB).toString(16).padStart(16, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** An event id's 16 bytes, as `auth_events` stores it (decision 0028). */
export function eventIdBytes(id: string): Buffer {
  return Buffer.from(id.replaceAll('-', ''), 'hex');
}

/** An event id as readers see it: the UUID text. */
export function eventIdText(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** When the event happened: the id's first 48 bits, milliseconds since 1970. */
export function eventIdTime(bytes: Buffer): Date {
  return new Date(bytes.readUIntBE(0, 6));
}

/**
 * The six bytes an id made at `at` starts with. A stored id is smaller exactly when it was made
 * before `at` (bytes compare as memcmp, and a longer value with an equal prefix is larger), so
 * `"id" < eventIdFloor(at)` selects the events before `at` through the primary key.
 */
export function eventIdFloor(at: Date): Buffer {
  const bytes = Buffer.alloc(6);
  // Clamped to what 48 bits hold (the year 10889): an instant past it is after every id.
  bytes.writeUIntBE(Math.min(MAX_EVENT_ID_MS, Math.max(0, Math.floor(at.getTime()))), 0, 6);
  return bytes;
}
