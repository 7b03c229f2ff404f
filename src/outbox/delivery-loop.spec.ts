import { Logger } from '@nestjs/common';
import { getMaxListeners } from 'node:events';
import { RandomSource } from '../common/random/random-source.js';
import { Clock } from '../common/time/clock.js';
import { DeliveryLoop, retryDelayMs, type DeliveryChannel } from './delivery-loop.js';
import type { OutboxClaim } from './outbox-claim.js';

class FixedClock extends Clock {
  override now(): Date {
    return new Date('2026-01-01T00:00:00.000Z');
  }
}

describe(retryDelayMs.name, () => {
  it('should double from the first delay after each failed attempt, up to the longest', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 60].map((n) => retryDelayMs(n, 10_000, 60_000))).toEqual([
      10_000, 20_000, 40_000, 60_000, 60_000, 60_000, 60_000, 60_000,
    ]);
  });
});

describe(DeliveryLoop.name, () => {
  const settings = { pollIntervalMs: 60_000, attemptTimeoutMs: 1_000, batchSize: 2 };

  function loopOver(queue: string[], attempted: string[], claims: OutboxClaim[]) {
    const channel: DeliveryChannel<string> = {
      claimDue: (claim, limit) => {
        claims.push(claim);
        return Promise.resolve(queue.splice(0, limit));
      },
      attempt: (message, signal) => {
        expect(signal.aborted).toBe(false);
        attempted.push(message);
        return Promise.resolve();
      },
    };
    return new DeliveryLoop(
      channel,
      settings,
      new FixedClock(),
      new RandomSource(),
      new Logger('test'),
    );
  }

  /** Runs one round of `channel` to its end with `overrides` of the settings, then stops. */
  async function deliverAll(
    channel: DeliveryChannel<string>,
    overrides: Partial<typeof settings>,
  ): Promise<void> {
    const sut = new DeliveryLoop(
      channel,
      { ...settings, ...overrides },
      new FixedClock(),
      new RandomSource(),
      new Logger('test'),
    );
    sut.wake();
    await sut.idle();
    await sut.stop();
  }

  it('should claim batch after batch until nothing is due, each claim its own id lasting two deadlines', async () => {
    const attempted: string[] = [];
    const claims: OutboxClaim[] = [];
    const sut = loopOver(['a', 'b', 'c'], attempted, claims);

    sut.wake();
    await sut.idle();

    expect(attempted).toEqual(['a', 'b', 'c']);
    expect(claims).toHaveLength(3);
    expect(new Set(claims.map((c) => c.id)).size).toBe(3);
    expect(claims[0].until.getTime() - claims[0].now.getTime()).toBe(2_000);
    await sut.stop();
  });

  it('should run another round when woken during one, and none once stopped', async () => {
    const queue = ['a'];
    const attempted: string[] = [];
    const sut = loopOver(queue, attempted, []);

    sut.wake();
    queue.push('b');
    sut.wake();
    await sut.idle();
    expect(attempted).toEqual(['a', 'b']);

    await sut.stop();
    queue.push('c');
    sut.wake();
    await sut.idle();
    expect(attempted).toEqual(['a', 'b']);
  });

  it('should give every attempt of a batch the same signal, and each batch its own', async () => {
    const signals: AbortSignal[][] = [];
    const queue = ['a', 'b', 'c', 'd', 'e'];
    const channel: DeliveryChannel<string> = {
      claimDue: (_claim, limit) => {
        signals.push([]);
        return Promise.resolve(queue.splice(0, limit));
      },
      attempt: (_message, signal) => {
        signals.at(-1)?.push(signal);
        return Promise.resolve();
      },
    };
    await deliverAll(channel, { batchSize: 3 });

    const [first, second] = signals;
    expect(first).toHaveLength(3);
    expect(new Set(first).size).toBe(1);
    expect(second).toHaveLength(2);
    expect(new Set(second).size).toBe(1);
    expect(second?.[0]).not.toBe(first?.[0]);
  });

  it('should abort the attempts of a batch together at the attempt deadline', async () => {
    const attemptTimeoutMs = 50;
    const aborted: { reason: unknown; afterMs: number }[] = [];
    const queue = ['a', 'b'];
    const channel: DeliveryChannel<string> = {
      claimDue: (_claim, limit) => Promise.resolve(queue.splice(0, limit)),
      attempt: (_message, signal) => {
        const started = performance.now();
        return new Promise<void>((resolve) => {
          signal.addEventListener('abort', () => {
            aborted.push({ reason: signal.reason, afterMs: performance.now() - started });
            resolve();
          });
        });
      },
    };
    await deliverAll(channel, { attemptTimeoutMs });

    expect(aborted).toHaveLength(2);
    for (const { reason, afterMs } of aborted) {
      expect(reason).toBeInstanceOf(DOMException);
      expect((reason as DOMException).name).toBe('TimeoutError');
      // Timers may fire a little early or late; the deadline is what matters, not the precision.
      expect(afterMs).toBeGreaterThanOrEqual(attemptTimeoutMs - 5);
    }
  });

  it('should raise the listener limit of the shared signal to the batch, so Node does not warn of a leak', async () => {
    const limits: number[] = [];
    const queue = Array.from({ length: 32 }, (_, i) => String(i));
    const channel: DeliveryChannel<string> = {
      claimDue: (_claim, limit) => Promise.resolve(queue.splice(0, limit)),
      attempt: (_message, signal) => {
        limits.push(getMaxListeners(signal));
        return Promise.resolve();
      },
    };
    await deliverAll(channel, { batchSize: 32 });

    expect(limits).toHaveLength(32);
    expect(Math.min(...limits)).toBeGreaterThanOrEqual(32);
  });
});
