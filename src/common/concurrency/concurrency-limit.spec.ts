import { ConcurrencyLimit } from './concurrency-limit.js';

/** A task that runs until `finish` is called, recording when it started. */
function controllable(log: string[], name: string) {
  let finish!: (value: string) => void;
  let fail!: (error: Error) => void;
  const task = () => {
    log.push(`start ${name}`);
    return new Promise<string>((resolve, reject) => {
      finish = resolve;
      fail = reject;
    });
  };
  return { task, finish: () => finish(name), fail: (error: Error) => fail(error) };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe(ConcurrencyLimit.name, () => {
  it('should run at most max tasks at once and start the others in arrival order', async () => {
    const sut = new ConcurrencyLimit(2);
    const log: string[] = [];
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((name) => controllable(log, name));

    const results = [a, b, c, d].map((t) => sut.run(t.task));
    await settle();
    expect(log).toEqual(['start a', 'start b']);
    expect([sut.active, sut.queued]).toEqual([2, 2]);

    b.finish();
    await settle();
    expect(log).toEqual(['start a', 'start b', 'start c']);

    a.finish();
    await settle();
    expect(log).toEqual(['start a', 'start b', 'start c', 'start d']);

    c.finish();
    d.finish();
    expect(await Promise.all(results)).toEqual(['a', 'b', 'c', 'd']);
    expect([sut.active, sut.queued]).toEqual([0, 0]);
  });

  it('should free the place of a task that fails and pass its error on', async () => {
    const sut = new ConcurrencyLimit(1);
    const log: string[] = [];
    const [a, b] = ['a', 'b'].map((name) => controllable(log, name));

    const first = sut.run(a.task);
    const second = sut.run(b.task);
    await settle();
    a.fail(new Error('boom'));

    await expect(first).rejects.toThrow('boom');
    await settle();
    expect(log).toEqual(['start a', 'start b']);
    b.finish();
    await expect(second).resolves.toBe('b');
    expect(sut.active).toBe(0);
  });

  it('should not let a newcomer overtake a waiting task when a place frees up', async () => {
    const sut = new ConcurrencyLimit(1);
    const log: string[] = [];
    const [a, b, c] = ['a', 'b', 'c'].map((name) => controllable(log, name));

    void sut.run(a.task);
    void sut.run(b.task);
    await settle();
    a.finish();
    void sut.run(c.task);
    await settle();

    expect(log).toEqual(['start a', 'start b']);
    expect([sut.active, sut.queued]).toEqual([1, 1]);
  });

  it.each([0, -1, 1.5, Number.NaN])('should refuse a limit of %s', (max) => {
    expect(() => new ConcurrencyLimit(max)).toThrow(RangeError);
  });
});
