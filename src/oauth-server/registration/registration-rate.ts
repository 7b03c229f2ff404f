import { setBounded } from '../../common/collections/bounded-map.js';
import type { Clock } from '../../common/time/clock.js';

/** Registrations one client address may attempt per window. */
export const REGISTRATIONS_PER_WINDOW = 20;
export const REGISTRATION_WINDOW_MS = 60 * 60 * 1000;
/** Addresses remembered at most; past this the oldest goes (a bounded map, not a leak). */
const ADDRESSES_MAX = 10_000;

interface Window {
  readonly startedAt: number;
  count: number;
}

/**
 * How many registrations each client address attempted in its current window (fixed windows of
 * an hour, counted on this instance). Keygate has no shared rate limiter to reuse; this one is
 * small and bounded, and every attempt counts, refused ones too (probing costs as much as
 * registering).
 */
export class RegistrationRate {
  private readonly windows = new Map<string, Window>();

  constructor(private readonly clock: Clock) {}

  /** Counts an attempt from `address`; the seconds to wait when it is one too many, else null. */
  attempt(address: string): number | null {
    const now = this.clock.now().getTime();
    const window = this.windows.get(address);
    if (window === undefined || now - window.startedAt >= REGISTRATION_WINDOW_MS) {
      setBounded(this.windows, address, { startedAt: now, count: 1 }, ADDRESSES_MAX);
      return null;
    }
    window.count += 1;
    if (window.count <= REGISTRATIONS_PER_WINDOW) {
      return null;
    }
    return Math.max(1, Math.ceil((window.startedAt + REGISTRATION_WINDOW_MS - now) / 1000));
  }
}
