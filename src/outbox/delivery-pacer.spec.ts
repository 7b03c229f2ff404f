import { DeliveryPacer, type LoadSignals, type PacerSettings } from './delivery-pacer.js';

/** Load readings a test sets before each batch. */
class ScriptedLoad implements LoadSignals {
  requests = 0;
  utilization = 0;

  requestsStarted(): number {
    return this.requests;
  }

  loopUtilization(): number {
    return this.utilization;
  }
}

const SETTINGS: PacerSettings = { busyUtilization: 0.9, firstPauseMs: 5, longestPauseMs: 40 };

describe(DeliveryPacer.name, () => {
  function pacerOver(load: ScriptedLoad) {
    const pauses: number[] = [];
    const sut = new DeliveryPacer(load, SETTINGS, (ms) => {
      pauses.push(ms);
      return Promise.resolve();
    });
    return { sut, pauses };
  }

  /** Runs `batches` batches, each after requests came (or not) at the given utilization. */
  async function batches(
    sut: DeliveryPacer,
    load: ScriptedLoad,
    count: number,
    { requestsPerBatch, utilization }: { requestsPerBatch: number; utilization: number },
  ): Promise<void> {
    for (let i = 0; i < count; i++) {
      load.requests += requestsPerBatch;
      load.utilization = utilization;
      await sut.beforeBatch(new AbortController().signal);
    }
  }

  it('should not pause while no request comes, however busy the loop is (a backlog drains at full speed)', async () => {
    const load = new ScriptedLoad();
    const { sut, pauses } = pacerOver(load);

    await batches(sut, load, 5, { requestsPerBatch: 0, utilization: 1 });

    expect(pauses).toEqual([]);
    expect(sut.currentPauseMs).toBe(0);
  });

  it('should not pause while requests come and the loop has room', async () => {
    const load = new ScriptedLoad();
    const { sut, pauses } = pacerOver(load);

    await batches(sut, load, 5, { requestsPerBatch: 50, utilization: 0.89 });

    expect(pauses).toEqual([]);
  });

  it('should double the pause while requests keep the loop busy, up to the longest', async () => {
    const load = new ScriptedLoad();
    const { sut, pauses } = pacerOver(load);

    await batches(sut, load, 6, { requestsPerBatch: 50, utilization: 0.9 });

    expect(pauses).toEqual([5, 10, 20, 40, 40, 40]);
  });

  it('should halve the pause back to none once the load falls', async () => {
    const load = new ScriptedLoad();
    const { sut, pauses } = pacerOver(load);
    await batches(sut, load, 4, { requestsPerBatch: 50, utilization: 1 });
    pauses.length = 0;

    await batches(sut, load, 4, { requestsPerBatch: 50, utilization: 0.3 });

    expect(pauses).toEqual([20, 10, 5]);
    expect(sut.currentPauseMs).toBe(0);
  });

  it('should halve the pause when the requests stop, even if the loop stays busy with deliveries', async () => {
    const load = new ScriptedLoad();
    const { sut, pauses } = pacerOver(load);
    await batches(sut, load, 4, { requestsPerBatch: 50, utilization: 1 });
    pauses.length = 0;

    await batches(sut, load, 3, { requestsPerBatch: 0, utilization: 1 });

    expect(pauses).toEqual([20, 10, 5]);
  });

  it('should not count requests that came before it was made', async () => {
    const load = new ScriptedLoad();
    load.requests = 1_000;
    load.utilization = 1;
    const { sut, pauses } = pacerOver(load);

    await sut.beforeBatch(new AbortController().signal);

    expect(pauses).toEqual([]);
  });

  it('should not pause once the signal aborted', async () => {
    const load = new ScriptedLoad();
    const { sut, pauses } = pacerOver(load);
    const stopping = new AbortController();
    stopping.abort();

    load.requests = 10;
    load.utilization = 1;
    await sut.beforeBatch(stopping.signal);

    expect(pauses).toEqual([]);
  });

  it('should end a real pause early, without an error, when the signal aborts', async () => {
    const load = new ScriptedLoad();
    const sut = new DeliveryPacer(load, {
      ...SETTINGS,
      firstPauseMs: 60_000,
      longestPauseMs: 60_000,
    });
    const stopping = new AbortController();
    load.requests = 10;
    load.utilization = 1;

    const started = performance.now();
    const paused = sut.beforeBatch(stopping.signal);
    setTimeout(() => stopping.abort(), 20);
    await expect(paused).resolves.toBeUndefined();

    expect(performance.now() - started).toBeLessThan(10_000);
  });
});
