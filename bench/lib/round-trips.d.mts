// Types of what the tests take from round-trips.mjs: one relay counts round trips for both the
// benchmark's report and test/round-trips.e2e-spec.ts.

/** A loopback relay to PostgreSQL that counts the round trips made through it. */
export interface RoundTripCounter {
  readonly port: number;
  /** Round trips since the last reset(): the messages after which a client waits for the server. */
  count(): number;
  reset(): void;
  close(): Promise<void>;
}

export function startRoundTripCounter(target: {
  host: string;
  port: number;
}): Promise<RoundTripCounter>;
