import type { AccountState } from '../user.repository.js';

/** Milliseconds on a clock that never jumps (performance.now in the service, a number in tests). */
export type ElapsedMs = () => number;

/**
 * How old the newest heartbeat the listener received may be, measured from when it was sent,
 * for the cache to answer: the staleness bound of docs/behaviour.md. A change acknowledged on
 * another instance more than this long ago is never answered as before.
 */
export const STALENESS_BOUND_MS = 500;

/** How often the listener sends its heartbeat through the channel it listens on. */
export const HEARTBEAT_INTERVAL_MS = 100;

/** The most accounts one instance keeps; past it the oldest entry makes room. */
export const MAX_CACHED_ACCOUNTS = 100_000;

/** A strict read under way, which a change of its account makes unfit to keep. */
interface PendingRead {
  readonly epoch: number;
  isInvalidated: boolean;
}

/**
 * The account states of the bearer path, kept per instance (Database__AccountCache=on, PostgreSQL
 * only), and the proof that they are fresh. AccountChangeListener feeds it: every change of a
 * `users` row arrives as a notification (a trigger, so no writer can forget it), and its own
 * heartbeat, sent through the same channel, proves how far the notifications have been read.
 * PostgreSQL delivers notifications in commit order, so once a heartbeat sent at `s` has arrived,
 * every change acknowledged before `s` has arrived too.
 *
 * It answers from memory only while it can prove that: listening, and the newest heartbeat
 * received was sent at most STALENESS_BOUND_MS ago. Otherwise (off, on SQLite, while the listener
 * is down, reconnecting or behind) every read is strict, exactly the read without the cache.
 * Entries kept before the listener's last (re)connect are dropped (its epoch), and a strict read
 * whose account changed while it ran is not kept.
 */
export class AccountStateCache {
  private readonly entries = new Map<string, AccountState>();
  private readonly pending = new Map<string, Set<PendingRead>>();
  /** Moves on every (re)connect and disconnect: reads begun before it are not kept. */
  private epoch = 0;
  private isListening = false;
  /** When the newest heartbeat received since the last (re)connect was sent. */
  private provenAt: number | undefined;

  constructor(
    readonly isEnabled: boolean,
    private readonly elapsedMs: ElapsedMs,
    private readonly boundMs = STALENESS_BOUND_MS,
    private readonly maxEntries = MAX_CACHED_ACCOUNTS,
  ) {}

  /** The account's state: from memory when provably fresh, else `strict`, kept if it may be. */
  async read(id: string, strict: () => Promise<AccountState | null>): Promise<AccountState | null> {
    if (!this.isFresh()) {
      return strict();
    }
    const known = this.entries.get(id);
    if (known !== undefined) {
      return known;
    }
    const read: PendingRead = { epoch: this.epoch, isInvalidated: false };
    let reads = this.pending.get(id);
    if (reads === undefined) {
      reads = new Set();
      this.pending.set(id, reads);
    }
    reads.add(read);
    try {
      const state = await strict();
      // Only an existing account is kept: ids are never reused, and a missing one stays strict.
      if (state !== null && !read.isInvalidated && read.epoch === this.epoch && this.isListening) {
        this.keep(id, Object.freeze({ ...state }));
      }
      return state;
    } finally {
      reads.delete(read);
      if (reads.size === 0) {
        this.pending.delete(id);
      }
    }
  }

  /** Whether an answer from memory now is provably within the bound. */
  isFresh(): boolean {
    return (
      this.isEnabled &&
      this.isListening &&
      this.provenAt !== undefined &&
      this.elapsedMs() - this.provenAt <= this.boundMs
    );
  }

  /** The listener is listening (again): nothing from before counts, until a heartbeat arrives. */
  listening(): void {
    this.reset();
    this.isListening = true;
  }

  /** The listener's connection is gone or failed: strict reads until it listens again. */
  stopped(): void {
    this.reset();
    this.isListening = false;
  }

  /** A heartbeat sent at `sentAt` (ElapsedMs) arrived: every change committed before it has. */
  proven(sentAt: number): void {
    if (this.isListening && (this.provenAt === undefined || sentAt > this.provenAt)) {
      this.provenAt = sentAt;
    }
  }

  /** The account's row changed or went. */
  changed(id: string): void {
    this.entries.delete(id);
    const reads = this.pending.get(id);
    if (reads !== undefined) {
      for (const read of reads) {
        read.isInvalidated = true;
      }
    }
  }

  /** Every row may have changed (a TRUNCATE, or a notification not understood). */
  changedAll(): void {
    this.epoch += 1;
    this.entries.clear();
  }

  /** How many accounts are kept; for tests and metrics. */
  get size(): number {
    return this.entries.size;
  }

  private reset(): void {
    this.epoch += 1;
    this.entries.clear();
    this.provenAt = undefined;
  }

  private keep(id: string, state: AccountState): void {
    if (this.entries.size >= this.maxEntries && !this.entries.has(id)) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) {
        this.entries.delete(oldest.value);
      }
    }
    this.entries.set(id, state);
  }
}
