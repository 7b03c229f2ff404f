import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { DataSource, type EntityManager } from 'typeorm';
import { buildUser } from '../../test/factories/user.factory.js';
import { createInMemoryDataSource } from '../../test/utils/in-memory-database.js';
import { User } from '../users/entities/user.entity.js';
import { ENTITIES } from './data-source.js';
import { dataSourceOptions } from './data-source-options.js';
import { runMigrations } from './run-migrations.js';
import { sqliteConnectionOf } from './driver-handle.js';
import { GROUP_MAX_UNITS, UnitOfWork } from './unit-of-work.js';
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

  it("should reject with the unit's error, remade in this realm if it came from another", async () => {
    // better-sqlite3's errors come from the realm that first loaded its addon: under Jest, often
    // not this test file's, where they fail `instanceof Error`.
    const foreign = runInNewContext(
      'Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" })',
    ) as Error;
    expect(foreign instanceof Error).toBe(false);

    const failing = sut.transactionOnSqlite(() => Promise.reject(foreign));

    await expect(failing).rejects.toThrow(new Error('database is locked'));
    await expect(failing).rejects.toMatchObject({ code: 'SQLITE_BUSY', cause: foreign });
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

  describe('group commit (SQLite)', () => {
    const insert = (email: string) => (m: EntityManager) =>
      m.insert(User, buildUser({ email })).then(() => email);

    beforeEach(() => {
      // These tests tell units in one turn and check that they share a group; under load, 5 ms
      // can pass between two of them and split the group (GROUP_LIMITS says why).
      sut = new UnitOfWork(dataSource, { maxUnits: GROUP_MAX_UNITS, maxMs: 60_000 });
    });

    it('should roll back only the failing unit of a group and commit the others', async () => {
      const units = [
        sut.transaction(insert('a@example.com')),
        sut.transaction(async (m) => {
          await m.insert(User, buildUser({ email: 'b@example.com' }));
          throw new Error('b failed');
        }),
        sut.transactionOnSqlite(() => Promise.reject(new Error('c failed'))),
        sut.run(insert('d@example.com')),
      ];

      const outcomes = await Promise.allSettled(units);

      expect(outcomes.map((o) => o.status)).toEqual([
        'fulfilled',
        'rejected',
        'rejected',
        'fulfilled',
      ]);
      expect((outcomes[1] as PromiseRejectedResult).reason).toEqual(new Error('b failed'));
      await expect(emails()).resolves.toEqual(['a@example.com', 'd@example.com']);
    });

    it('should reject every unit of a group whose COMMIT fails, and keep none of its writes', async () => {
      const db = sqliteConnectionOf(dataSource);
      db.exec(
        'CREATE TABLE "parents" ("id" TEXT PRIMARY KEY); CREATE TABLE "children" ("id" TEXT, ' +
          '"parentId" TEXT REFERENCES "parents" ("id") DEFERRABLE INITIALLY DEFERRED)',
      );
      const units = [
        sut.transaction(insert('a@example.com')),
        // Checked only at COMMIT: the group's COMMIT fails.
        sut.transactionOnSqlite((raw) => {
          raw.prepare("INSERT INTO \"children\" VALUES ('c', 'missing')").run();
          return Promise.resolve('child');
        }),
        sut.run(insert('b@example.com')),
      ];

      const outcomes = await Promise.allSettled(units);

      expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
      expect(String((outcomes[0] as PromiseRejectedResult).reason)).toMatch(/FOREIGN KEY/);
      await expect(emails()).resolves.toEqual([]);
      await expect(sut.transaction(insert('after@example.com'))).resolves.toBe('after@example.com');
    });

    it('should reject every unit of a group that SQLite rolled back whole', async () => {
      const units = [
        sut.transaction(insert('a@example.com')),
        // As SQLITE_FULL or an I/O error would: the whole transaction is gone.
        sut.transactionOnSqlite((raw) => {
          raw.exec('ROLLBACK');
          return Promise.reject(new Error('disk full'));
        }),
        sut.transaction(insert('b@example.com')),
      ];

      const outcomes = await Promise.allSettled(units);

      expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
      expect((outcomes[0] as PromiseRejectedResult).reason).toEqual(new Error('disk full'));
      await expect(emails()).resolves.toEqual(['b@example.com']);
    });
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
          { entities: ENTITIES },
        ),
      );
      await fileSource.initialize();
      await runMigrations(fileSource);
      // No time limit on a group: which units share one must not depend on the machine's load.
      fileSut = new UnitOfWork(fileSource, { maxUnits: GROUP_MAX_UNITS, maxMs: 60_000 });
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
    /** Rows of `users` another connection sees: committed ones only. */
    const committedUsers = (): number =>
      (other.prepare('SELECT count(*) AS n FROM "users"').get() as { n: number }).n;

    it('should share one transaction among concurrent units and settle none before its COMMIT', async () => {
      const seenCommitted: number[] = [];
      const settledSeeing: number[] = [];
      const units = Array.from({ length: 5 }, (_, i) =>
        fileSut
          .transaction(async (m) => {
            seenCommitted.push(committedUsers());
            await m.insert(User, buildUser({ email: `u${i}@example.com` }));
          })
          .then(() => settledSeeing.push(committedUsers())),
      );

      await Promise.all(units);

      // One group: no unit saw another's row committed; every answer came after all were.
      expect(seenCommitted).toEqual([0, 0, 0, 0, 0]);
      expect(settledSeeing).toEqual([5, 5, 5, 5, 5]);
    });

    /**
     * Timers due every 10 ms from now until `until` settles, each recording how late it fired:
     * a thread blocked in SQLite's busy handler shows as one timer late by the whole wait.
     */
    const timerLateness = async (until: Promise<unknown>): Promise<number[]> => {
      const late: number[] = [];
      let done = false;
      void until.finally(() => (done = true)).catch(() => undefined);
      while (!done) {
        const due = performance.now() + 10;
        await new Promise((resolve) => setTimeout(resolve, 10));
        late.push(performance.now() - due);
      }
      return late;
    };

    it("should wait for another process's write lock without blocking the event loop, and commit once it is released", async () => {
      other.exec('CREATE TABLE "marks" ("i" INTEGER)');
      other.exec('BEGIN IMMEDIATE');
      const started = performance.now();
      setTimeout(() => other.exec('COMMIT'), 300);
      const unit = fileSut.transactionOnSqlite((db) => {
        db.prepare('INSERT INTO "marks" VALUES (1)').run();
        return Promise.resolve(performance.now() - started);
      });
      // A read that needs no lock (GET /me's) is served while the unit waits.
      const read = fileSut.runOnSqlite(
        (db) => (db.prepare('SELECT count(*) AS n FROM "users"').get() as { n: number }).n,
      );

      const [late, readAt] = await Promise.all([
        timerLateness(unit),
        read.then(() => performance.now() - started),
      ]);

      const committedAfter = await unit;
      expect(committedAfter).toBeGreaterThanOrEqual(290);
      expect(committedAfter).toBeLessThan(900);
      expect(readAt).toBeLessThan(100);
      expect(Math.max(...late)).toBeLessThan(100);
      expect(other.prepare('SELECT count(*) AS n FROM "marks"').get()).toEqual({ n: 1 });
    });

    it("should fail the units with SQLite's busy error once the lock outlives the statement timeout, and carry on after", async () => {
      other.exec('BEGIN IMMEDIATE');
      const started = performance.now();
      const units = [
        fileSut.transactionOnSqlite(() => Promise.resolve('a')),
        fileSut.transaction(() => Promise.resolve('b')),
      ];
      const failedAt = units.map((unit) =>
        unit.then(
          () => Number.NaN,
          () => performance.now() - started,
        ),
      );

      const late = await timerLateness(Promise.allSettled(units));
      const outcomes = await Promise.allSettled(units);
      other.exec('ROLLBACK');

      for (const outcome of outcomes) {
        expect(outcome.status).toBe('rejected');
        const reason = (outcome as PromiseRejectedResult).reason as Error & { code?: string };
        expect(reason.message).toBe('database is locked');
        expect(reason.code).toBe('SQLITE_BUSY');
      }
      // statementTimeoutMs is 1,000: each unit waited that long in all, no longer.
      for (const at of await Promise.all(failedAt)) {
        expect(at).toBeGreaterThanOrEqual(990);
        expect(at).toBeLessThan(1_400);
      }
      expect(Math.max(...late)).toBeLessThan(100);
      await expect(fileSut.transactionOnSqlite(() => Promise.resolve('after'))).resolves.toBe(
        'after',
      );
    });

    it('should commit a group at GROUP_MAX_UNITS units at most, and start the next', async () => {
      other.exec('CREATE TABLE "marks" ("i" INTEGER)');
      const committedMarks = (): number =>
        (other.prepare('SELECT count(*) AS n FROM "marks"').get() as { n: number }).n;
      const seenCommitted: number[] = [];
      const units = Array.from({ length: GROUP_MAX_UNITS + 2 }, (_, i) =>
        fileSut.transactionOnSqlite((db) => {
          seenCommitted.push(committedMarks());
          db.prepare('INSERT INTO "marks" VALUES (?)').run(i);
          return Promise.resolve();
        }),
      );

      await Promise.all(units);

      // Units of one group see the same committed count: the count before the group began.
      const groupSizes = [...new Set(seenCommitted)].map(
        (count) => seenCommitted.filter((seen) => seen === count).length,
      );
      expect(groupSizes.length).toBeGreaterThan(1);
      expect(Math.max(...groupSizes)).toBeGreaterThan(1);
      expect(Math.max(...groupSizes)).toBeLessThanOrEqual(GROUP_MAX_UNITS);
      expect(committedMarks()).toBe(GROUP_MAX_UNITS + 2);
    });
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
