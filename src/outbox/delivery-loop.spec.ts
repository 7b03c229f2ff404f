import { Logger } from '@nestjs/common';
import { getMaxListeners } from 'node:events';
import { RandomSource } from '../common/random/random-source.js';
import { Clock } from '../common/time/clock.js';
import { DeliveryLoop, retryDelayMs, type DeliveryChannel } from './delivery-loop.js';
import { DeliveryPacer } from './delivery-pacer.js';
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

  it('should ask the pacer before every claim, and stop at once when stopped during a pause', async () => {
    const events: string[] = [];
    const queue = ['a', 'b', 'c'];
    let requests = 0;
    let pauses = 0;
    const stopping: { stop?: () => Promise<void> } = {};
    const pacer = new DeliveryPacer(
      { requestsStarted: () => (requests += 1), loopUtilization: () => 1 },
      { busyUtilization: 0.9, firstPauseMs: 5, longestPauseMs: 5 },
      (ms, signal) => {
        events.push(`pause ${ms}`);
        pauses += 1;
        if (pauses < 3) {
          return Promise.resolve();
        }
        // The third pause lasts until the loop is stopped.
        const aborted = new Promise<void>((resolve) =>
          signal.addEventListener('abort', () => resolve()),
        );
        void stopping.stop?.();
        return aborted;
      },
    );
    const channel: DeliveryChannel<string> = {
      claimDue: (_claim, limit) => {
        events.push('claim');
        return Promise.resolve(queue.splice(0, limit));
      },
      attempt: (message) => {
        events.push(message);
        return Promise.resolve();
      },
    };
    const sut = new DeliveryLoop(
      channel,
      { ...settings, batchSize: 1, pacer },
      new FixedClock(),
      new RandomSource(),
      new Logger('test'),
    );
    stopping.stop = () => sut.stop();

    sut.wake();
    await sut.idle();

    expect(events).toEqual(['pause 5', 'claim', 'a', 'pause 5', 'claim', 'b', 'pause 5']);
    expect(queue).toEqual(['c']);
  });

  it('should attempt the messages of a lane one after the other, lanes side by side, and let go of a lane after a message to retry', async () => {
    const events: string[] = [];
    const released: string[][] = [];
    let afterBatch = 0;
    const queue = ['a1', 'b1', 'a2', 'b2', 'a3', 'c1'];
    const channel: DeliveryChannel<string> = {
      claimDue: (_claim, limit) => Promise.resolve(queue.splice(0, limit)),
      laneOf: (message) => message[0],
      attempt: async (message) => {
        events.push(`start ${message}`);
        await new Promise((resolve) => setImmediate(resolve));
        events.push(`end ${message}`);
        // b1 will be retried: b2 must wait for it.
        return message !== 'b1';
      },
      afterBatch: () => {
        afterBatch += 1;
        return Promise.resolve();
      },
      release: (messages) => {
        released.push([...messages]);
        expect(afterBatch).toBe(1);
        return Promise.resolve();
      },
    };
    await deliverAll(channel, { batchSize: 6 });

    const started = events.filter((e) => e.startsWith('start')).map((e) => e.slice(6));
    expect(started).toEqual(['a1', 'b1', 'c1', 'a2', 'a3']);
    // Lanes side by side: b1 and c1 started before a1 ended; a2 only after a1 ended.
    expect(events.indexOf('start c1')).toBeLessThan(events.indexOf('end a1'));
    expect(events.indexOf('start a2')).toBeGreaterThan(events.indexOf('end a1'));
    expect(events.indexOf('start a3')).toBeGreaterThan(events.indexOf('end a2'));
    expect(released).toEqual([['b2']]);
  });

  it('should make every message a lane of its own without laneOf, and release nothing', async () => {
    const started: string[] = [];
    let releases = 0;
    const queue = ['a', 'b', 'c'];
    const channel: DeliveryChannel<string> = {
      claimDue: (_claim, limit) => Promise.resolve(queue.splice(0, limit)),
      attempt: async (message) => {
        started.push(message);
        await new Promise((resolve) => setImmediate(resolve));
        return false;
      },
      release: () => {
        releases += 1;
        return Promise.resolve();
      },
    };
    await deliverAll(channel, { batchSize: 3 });

    expect(started).toEqual(['a', 'b', 'c']);
    expect(releases).toBe(0);
  });
});
