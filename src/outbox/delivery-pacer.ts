import { setTimeout as sleep } from 'node:timers/promises';

/** What the pacer reads of the process's load: cheap counters, read once per batch. */
export interface LoadSignals {
  /** Requests the service began to answer since it started (a counter that only grows). */
  requestsStarted(): number;
  /** Share of time, 0 to 1, the event loop was busy since the previous call. */
  loopUtilization(): number;
}

export interface PacerSettings {
  /** The loop counts as busy from this share of its time on. */
  readonly busyUtilization: number;
  /** The first pause once requests keep the loop busy; each busy batch doubles it. */
  readonly firstPauseMs: number;
  /**
   * The longest pause between two batches: with a batch of `batchSize`, deliveries go on at
   * batchSize per longestPauseMs at least, however busy the requests keep the loop.
   */
  readonly longestPauseMs: number;
}

/**
 * At 250 ms a saturated instance still spent about 3 % of a refresh window on deliveries; at 1 s
 * it sends at least 32 a second and catches up within about 2 s of the load falling (decision 0050).
 */
export const DEFAULT_PACER_SETTINGS: PacerSettings = {
  busyUtilization: 0.9,
  firstPauseMs: 5,
  longestPauseMs: 1_000,
};

/**
 * Gives requests priority over deliveries on the event loop they share (decision 0050, Cost):
 * before each batch, if requests came since the last batch and the loop was busy, the loop pauses,
 * twice as long as the last time, up to `longestPauseMs`; once the loop has room again, or no
 * request came, the pause halves back to none. So an idle or lightly loaded service delivers at
 * once and drains a backlog at full speed, while one saturated by requests gives its deliveries
 * a bounded share of the loop (one batch per longest pause) and catches up when the load falls;
 * the queue-age metric shows the lag meanwhile.
 */
export class DeliveryPacer {
  private pauseMs = 0;
  private lastRequests: number;

  constructor(
    private readonly signals: LoadSignals,
    private readonly settings: PacerSettings = DEFAULT_PACER_SETTINGS,
    private readonly wait: (ms: number, signal: AbortSignal) => Promise<void> = pause,
  ) {
    this.lastRequests = signals.requestsStarted();
    // The first batch's reading covers the time since the pacer was made, not since the start.
    signals.loopUtilization();
  }

  /** The pause the next batch waits for (for tests and the log). */
  get currentPauseMs(): number {
    return this.pauseMs;
  }

  /** Waits before a batch as long as the load asks; returns at once when `signal` aborts. */
  async beforeBatch(signal: AbortSignal): Promise<void> {
    const requests = this.signals.requestsStarted();
    // Both readings every time: each covers the span since the previous batch.
    const utilization = this.signals.loopUtilization();
    const requestsCame = requests !== this.lastRequests;
    this.lastRequests = requests;
    const { firstPauseMs, longestPauseMs } = this.settings;
    if (requestsCame && utilization >= this.settings.busyUtilization) {
      this.pauseMs = Math.min(Math.max(firstPauseMs, this.pauseMs * 2), longestPauseMs);
    } else {
      this.pauseMs = this.pauseMs / 2 < firstPauseMs ? 0 : this.pauseMs / 2;
    }
    if (this.pauseMs > 0 && !signal.aborted) {
      await this.wait(this.pauseMs, signal);
    }
  }
}

/** A pause that ends early, without an error, when `signal` aborts, and keeps no process alive. */
async function pause(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await sleep(ms, undefined, { signal, ref: false });
  } catch (error: unknown) {
    if (!signal.aborted) {
      throw error;
    }
  }
}
