import { jest } from '@jest/globals';
import { AccountLock } from './account-lock.js';

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every already-settled promise callback run. */
async function flush(): Promise<void> {
  for (let i = 0; i < 10; i += 1) {
    await Promise.resolve();
  }
}

function tailsOf(sut: AccountLock): Map<string, unknown> {
  return (sut as unknown as { tails: Map<string, unknown> }).tails;
}

describe(AccountLock.name, () => {
  let sut: AccountLock;

  beforeEach(() => {
    sut = new AccountLock();
  });

  it('should return the result of the task', async () => {
    await expect(sut.run('a@example.com', () => Promise.resolve(42))).resolves.toBe(42);
  });

  it('should run tasks for the same key one at a time, in arrival order', async () => {
    const events: string[] = [];
    const gates = [deferred(), deferred(), deferred()];
    const runs = gates.map((gate, index) =>
      sut.run('a@example.com', async () => {
        events.push(`start ${index}`);
        await gate.promise;
        events.push(`end ${index}`);
        return index;
      }),
    );

    await flush();
    expect(events).toEqual(['start 0']);

    // Released out of order: the later tasks still wait for the earlier ones.
    gates[2].resolve();
    gates[1].resolve();
    await flush();
    expect(events).toEqual(['start 0']);

    gates[0].resolve();
    await expect(Promise.all(runs)).resolves.toEqual([0, 1, 2]);
    expect(events).toEqual(['start 0', 'end 0', 'start 1', 'end 1', 'start 2', 'end 2']);
  });

  it('should run tasks for different keys concurrently', async () => {
    const events: string[] = [];
    const gateA = deferred();
    const gateB = deferred();
    const runA = sut.run('a@example.com', async () => {
      events.push('start a');
      await gateA.promise;
      events.push('end a');
    });
    const runB = sut.run('b@example.com', async () => {
      events.push('start b');
      await gateB.promise;
      events.push('end b');
    });

    await flush();
    expect(events).toEqual(['start a', 'start b']);

    gateB.resolve();
    await runB;
    expect(events).toEqual(['start a', 'start b', 'end b']);

    gateA.resolve();
    await runA;
    expect(events).toEqual(['start a', 'start b', 'end b', 'end a']);
  });

  it('should not let a rejected task block the next one for the same key', async () => {
    const gate = deferred();
    const failing = sut.run('a@example.com', async () => {
      await gate.promise;
      throw new Error('boom');
    });
    const next = jest.fn(() => Promise.resolve('next'));
    const following = sut.run('a@example.com', next);

    await flush();
    expect(next).not.toHaveBeenCalled();

    gate.resolve();
    await expect(failing).rejects.toThrow('boom');
    await expect(following).resolves.toBe('next');
    expect(next).toHaveBeenCalledTimes(1);
  });

  it('should not let a task that throws synchronously block the next one', async () => {
    const failing = sut.run('a@example.com', () => {
      throw new Error('sync boom');
    });

    await expect(failing).rejects.toThrow('sync boom');
    await expect(sut.run('a@example.com', () => Promise.resolve('ok'))).resolves.toBe('ok');
  });

  it('should forget a key once nobody is queued behind it', async () => {
    const gate = deferred();
    const first = sut.run('a@example.com', () => gate.promise);
    const second = sut.run('a@example.com', () => Promise.resolve());
    const other = sut.run('b@example.com', () => Promise.resolve());

    await flush();
    expect(tailsOf(sut).has('a@example.com')).toBe(true);

    gate.resolve();
    await Promise.all([first, second, other]);
    expect(tailsOf(sut).size).toBe(0);

    await expect(sut.run('a@example.com', () => Promise.resolve('again'))).resolves.toBe('again');
    await expect(
      sut.run('a@example.com', () => Promise.reject(new Error('failed'))),
    ).rejects.toThrow('failed');
    expect(tailsOf(sut).size).toBe(0);
  });
});
