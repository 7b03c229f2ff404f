import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource, type EntityManager } from 'typeorm';
import { buildUser } from '../../test/factories/user.factory.js';
import { createInMemoryDataSource } from '../../test/utils/in-memory-database.js';
import { User } from '../users/entities/user.entity.js';
import { dataSourceOptions } from './data-source-options.js';
import { runMigrations } from './run-migrations.js';
import { UnitOfWork } from './unit-of-work.js';
import { buildDatabaseConfig } from '../../test/factories/database-config.factory.js';

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
}

function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((res) => {
    resolve = res;
  });
  return { promise, resolve };
}

/** Lets pending I/O callbacks and promise jobs run for a few event-loop turns (no timers). */
async function eventLoopTurns(count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

describe(UnitOfWork.name, () => {
  let dataSource: DataSource;
  let sut: UnitOfWork;

  const emails = async (): Promise<string[]> =>
    (await dataSource.manager.find(User, { order: { email: 'ASC' } })).map((user) => user.email);

  beforeEach(async () => {
    dataSource = await createInMemoryDataSource();
    sut = new UnitOfWork(dataSource);
  });

  afterEach(async () => {
    await dataSource.destroy();
  });

  it('should return the result of a transaction', async () => {
    const result = await sut.transaction(async (m) => {
      await m.insert(User, buildUser({ email: 'a@example.com' }));
      return m.countBy(User, {});
    });

    expect(result).toBe(1);
    await expect(emails()).resolves.toEqual(['a@example.com']);
  });

  it('should return the result of a run', async () => {
    await sut.run((m) => m.insert(User, buildUser({ email: 'a@example.com' })));

    await expect(sut.run((m) => m.countBy(User, {}))).resolves.toBe(1);
  });

  it('should roll back every write of a failing transaction', async () => {
    const failing = sut.transaction(async (m) => {
      await m.insert(User, buildUser({ email: 'a@example.com' }));
      await m.insert(User, buildUser({ email: 'b@example.com' }));
      throw new Error('second step failed');
    });

    await expect(failing).rejects.toThrow('second step failed');
    await expect(emails()).resolves.toEqual([]);
  });

  it('should not let a failing unit block the units after it', async () => {
    const failingTransaction = sut.transaction(() => Promise.reject(new Error('tx failed')));
    const failingRun = sut.run(() => Promise.reject(new Error('run failed')));
    const next = sut.transaction(async (m) => {
      await m.insert(User, buildUser({ email: 'c@example.com' }));
      return 'committed';
    });

    await expect(failingTransaction).rejects.toThrow('tx failed');
    await expect(failingRun).rejects.toThrow('run failed');
    await expect(next).resolves.toBe('committed');
    await expect(sut.run((m) => m.countBy(User, {}))).resolves.toBe(1);
  });

  it('should not let a unit that throws synchronously block the units after it', async () => {
    const throwing = sut.run((): Promise<never> => {
      throw new Error('sync failure');
    });

    await expect(throwing).rejects.toThrow('sync failure');
    await expect(sut.run((m) => m.countBy(User, {}))).resolves.toBe(0);
  });

  it('should keep a unit that arrives during an awaiting transaction out of its rollback', async () => {
    const events: string[] = [];
    const aInserted = deferred();
    const releaseA = deferred();

    const a = sut.transaction(async (m: EntityManager) => {
      await m.insert(User, buildUser({ email: 'a@example.com' }));
      events.push('A inserted');
      aInserted.resolve();
      await releaseA.promise;
      events.push('A fails');
      throw new Error('A failed after awaiting');
    });
    await aInserted.promise;

    // On the single shared better-sqlite3 connection, an unserialised B would execute inside A's
    // open transaction and be acknowledged here, then silently vanish with A's rollback.
    const b = sut.run(async (m) => {
      await m.insert(User, buildUser({ email: 'b@example.com' }));
      events.push('B acknowledged');
    });
    await Promise.race([b, eventLoopTurns(20)]);
    expect(events).toEqual(['A inserted']);

    releaseA.resolve();
    await expect(a).rejects.toThrow('A failed after awaiting');
    await b;

    expect(events).toEqual(['A inserted', 'A fails', 'B acknowledged']);
    await expect(emails()).resolves.toEqual(['b@example.com']);
  });

  it('should run units in arrival order', async () => {
    const order: string[] = [];
    const gate = deferred();
    const first = sut.transaction(async (m) => {
      await gate.promise;
      await m.insert(User, buildUser({ email: 'first@example.com' }));
      order.push('first');
    });
    const second = sut.run(async (m) => {
      await m.insert(User, buildUser({ email: 'second@example.com' }));
      order.push('second');
    });
    const third = sut.transaction(async (m) => {
      order.push(`third sees ${await m.countBy(User, {})}`);
    });

    await eventLoopTurns(5);
    expect(order).toEqual([]);
    gate.resolve();
    await Promise.all([first, second, third]);

    expect(order).toEqual(['first', 'second', 'third sees 2']);
  });

  it('should keep nested transactions and saves inside a unit working (savepoints)', async () => {
    await sut.transaction(async (m) => {
      await m.save(User, buildUser({ email: 'a@example.com' }));
      await m
        .transaction(async (inner) => {
          await inner.insert(User, buildUser({ email: 'b@example.com' }));
          throw new Error('inner failed');
        })
        .catch(() => undefined);
      await m.transaction((inner) => inner.insert(User, buildUser({ email: 'c@example.com' })));
    });

    await expect(emails()).resolves.toEqual(['a@example.com', 'c@example.com']);
    await expect(sut.transaction((m) => m.countBy(User, {}))).resolves.toBe(2);
  });

  describe('on a SQLite file shared with another process', () => {
    let directory: string;
    let fileSource: DataSource;
    let fileSut: UnitOfWork;
    let other: Database.Database;

    beforeEach(async () => {
      directory = mkdtempSync(join(tmpdir(), 'keygate-uow-'));
      const path = join(directory, 'keygate.db');
      fileSource = new DataSource(
        dataSourceOptions(
          buildDatabaseConfig(
            { type: 'sqlite', path },
            { poolSize: 1, connectionTimeoutMs: 1_000, statementTimeoutMs: 1_000 },
          ),
        ),
      );
      await fileSource.initialize();
      await runMigrations(fileSource);
      fileSut = new UnitOfWork(fileSource);
      other = new Database(path);
      other.pragma('busy_timeout = 0');
    });

    afterEach(async () => {
      other.close();
      await fileSource.destroy();
      rmSync(directory, { recursive: true, force: true });
    });

    /** Whether the other connection could take the write lock right now (and gives it back). */
    const otherCanWrite = (): boolean => {
      try {
        other.exec('BEGIN IMMEDIATE');
        other.exec('ROLLBACK');
        return true;
      } catch {
        return false;
      }
    };

    it.each([
      ['transaction', (work: () => Promise<void>) => fileSut.transaction(work)],
      ['transactionOnSqlite', (work: () => Promise<void>) => fileSut.transactionOnSqlite(work)],
    ])(
      'should hold the write lock from the start of a %s, before it has read or written',
      async (_name, unit) => {
        const seen: boolean[] = [];

        await unit(() => {
          seen.push(otherCanWrite());
          return Promise.resolve();
        });
        seen.push(otherCanWrite());

        expect(seen).toEqual([false, true]);
      },
    );
  });

  it('should not serialise units on a database other than SQLite', async () => {
    const manager = {} as EntityManager;
    const fakePostgres = {
      options: { type: 'postgres' },
      manager,
      transaction: <T>(work: (m: EntityManager) => Promise<T>): Promise<T> => work(manager),
    } as unknown as DataSource;
    const postgresSut = new UnitOfWork(fakePostgres);
    const gate = deferred();
    const started: string[] = [];

    const slow = postgresSut.transaction(async () => {
      started.push('slow');
      await gate.promise;
    });
    const fast = postgresSut.run(() => {
      started.push('fast');
      return Promise.resolve('fast done');
    });

    await expect(fast).resolves.toBe('fast done');
    expect(started).toEqual(['slow', 'fast']);
    gate.resolve();
    await slow;
  });
});
