import type { Logger } from '@nestjs/common';
import { defaultMaxListeners, setMaxListeners } from 'node:events';
import type { RandomSource } from '../common/random/random-source.js';
import type { Clock } from '../common/time/clock.js';
import type { DeliveryPacer } from './delivery-pacer.js';
import type { OutboxClaim } from './outbox-claim.js';

/** Abort listeners one attempt may add to its signal before Node warns of a leak. */
const LISTENERS_PER_ATTEMPT = 4;

/** One kind of message on the outbox (mail, webhooks): how its rows are claimed and delivered. */
export interface DeliveryChannel<M> {
  /** Claims up to `limit` due messages under `claim`, counting the attempt (see claimDueRows). */
  claimDue(claim: OutboxClaim, limit: number): Promise<readonly M[]>;
  /**
   * One attempt of a claimed message, which records its own outcome (delivered, retry at, given
   * up) under the claim. `signal` aborts at the attempt's deadline and at shutdown; every
   * attempt of a batch is given the same one, as they start together with one deadline.
   * Resolves to false when the message will be retried: the later ones of its lane then wait.
   */
  attempt(message: M, signal: AbortSignal): Promise<boolean | void>;
  /**
   * The lane of a message: messages of one lane (a subscription's webhooks of one account) are
   * attempted one after the other, in the claimed order; lanes go side by side. Without it,
   * every message is a lane of its own.
   */
  laneOf?(message: M): string;
  /** Claimed messages left unattempted behind one that will be retried: their claim is let go. */
  release?(messages: readonly M[]): Promise<void>;
  /** After every attempt of a claimed batch ended: outcomes recorded together (one statement). */
  afterBatch?(): Promise<void>;
  /** Housekeeping after each round: deleting finished rows past their retention. */
  afterRound?(): Promise<void>;
}

export interface DeliveryLoopSettings {
  readonly pollIntervalMs: number;
  /** An attempt is aborted after this; a claim lasts twice this, so it outlives its attempt. */
  readonly attemptTimeoutMs: number;
  /** Messages claimed, and attempted side by side, per round. */
  readonly batchSize: number;
  /**
   * Waits before each batch while requests keep the event loop busy (webhooks); none for a
   * channel someone is waiting on (mail: a code to sign in with).
   */
  readonly pacer?: DeliveryPacer;
}

/**
 * The outbox's one delivery loop (decision 0050), off every request path: at start, every poll
 * interval, and at once when wake() says a request queued something. A round claims due messages
 * (a claim is a fresh id and an expiry, so of several instances one holds a message at a time,
 * and a claim whose holder died lapses), attempts them side by side, all bounded by the batch's
 * one attempt deadline, and claims again until nothing is due; a pacer, when the channel has one,
 * may pause before each batch to leave the loop to requests. A round that fails is logged and
 * the next one tries again; wake() during a round asks for one more.
 */
export class DeliveryLoop<M> {
  private readonly stopping = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | null = null;
  private wantsAnotherRound = false;

  constructor(
    private readonly channel: DeliveryChannel<M>,
    private readonly settings: DeliveryLoopSettings,
    private readonly clock: Clock,
    private readonly random: RandomSource,
    private readonly logger: Logger,
  ) {}

  /** Polls from now on, and starts a round at once. */
  start(): void {
    this.timer = setInterval(() => this.wake(), this.settings.pollIntervalMs);
    this.timer.unref();
    this.wake();
  }

  /** Stops polling, aborts attempts in flight (their claims lapse) and waits for the round. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.stopping.abort();
    await this.round;
  }

  /** Starts a round now, or another one right after the running one. */
  wake(): void {
    if (this.stopping.signal.aborted) {
      return;
    }
    if (this.round !== null) {
      this.wantsAnotherRound = true;
      return;
    }
    this.round = this.rounds().finally(() => {
      this.round = null;
    });
  }

  /** Resolves once no round is running: for tests and the admin CLI. */
  async idle(): Promise<void> {
    while (this.round !== null) {
      await this.round;
    }
  }

  private async rounds(): Promise<void> {
    do {
      this.wantsAnotherRound = false;
      try {
        await this.deliverDue();
        await this.channel.afterRound?.();
      } catch (error: unknown) {
        this.logger.error(
          'A delivery round failed; the next round tries again',
          error instanceof Error ? error.stack : String(error),
        );
      }
    } while (this.wantsAnotherRound && !this.stopping.signal.aborted);
  }

  /**
   * Attempts a lane's messages in order; after one that will be retried, returns the rest, left
   * unattempted.
   */
  private async attemptLane(lane: readonly M[], signal: AbortSignal): Promise<M[]> {
    for (let i = 0; i < lane.length; i++) {
      if ((await this.channel.attempt(lane[i], signal)) === false) {
        return lane.slice(i + 1);
      }
    }
    return [];
  }

  private async deliverDue(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      await this.settings.pacer?.beforeBatch(this.stopping.signal);
      if (this.stopping.signal.aborted) {
        return;
      }
      const now = this.clock.now();
      const claim: OutboxClaim = {
        id: this.random.uuid(),
        now,
        until: new Date(now.getTime() + 2 * this.settings.attemptTimeoutMs),
      };
      const due = await this.channel.claimDue(claim, this.settings.batchSize);
      if (due.length === 0) {
        return;
      }
      // Every attempt of the batch starts now and has the same deadline, so one signal serves
      // them all: a signal each cost more than the rest of the loop's work per message.
      const signal = AbortSignal.any([
        AbortSignal.timeout(this.settings.attemptTimeoutMs),
        this.stopping.signal,
      ]);
      // Each attempt listens on it (the HTTP client does): without this, a batch past ten
      // attempts would print Node's listener-leak warning, though the signal dies with the batch.
      setMaxListeners(Math.max(defaultMaxListeners, LISTENERS_PER_ATTEMPT * due.length), signal);
      const held = (
        await Promise.all(lanesOf(due, this.channel).map((lane) => this.attemptLane(lane, signal)))
      ).flat();
      await this.channel.afterBatch?.();
      if (held.length > 0) {
        await this.channel.release?.(held);
      }
    }
  }
}

/** `due` split into lanes, each in the claimed order; one lane per message without laneOf. */
function lanesOf<M>(due: readonly M[], channel: DeliveryChannel<M>): M[][] {
  if (channel.laneOf === undefined) {
    return due.map((message) => [message]);
  }
  const lanes = new Map<string, M[]>();
  for (const message of due) {
    const key = channel.laneOf(message);
    const lane = lanes.get(key);
    if (lane === undefined) {
      lanes.set(key, [message]);
    } else {
      lane.push(message);
    }
  }
  return [...lanes.values()];
}

/**
 * The delay before attempt `attempts + 1`, after `attempts` failed ones: `first`, doubling each
 * time, never above `longest`.
 */
export function retryDelayMs(attempts: number, first: number, longest: number): number {
  return Math.min(first * 2 ** Math.max(0, Math.min(attempts - 1, 40)), longest);
}
