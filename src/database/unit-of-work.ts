import { Injectable } from '@nestjs/common';
import type { Database as SqliteDatabase, Statement } from 'better-sqlite3';
import { DataSource, type EntityManager, type QueryRunner } from 'typeorm';
import { sqliteConnectionOf } from './driver-handle.js';

type Work<T> = (manager: EntityManager) => Promise<T>;

/**
 * The only way services touch the database.
 *
 * TypeORM on better-sqlite3 shares one connection between all requests, so a transaction that
 * awaits would let other requests' statements run inside it, and its rollback would silently
 * discard their acknowledged writes. On SQLite every unit therefore runs alone, in arrival
 * order; SQLite serialises writers anyway, and no unit ever awaits anything but the database
 * (password hashing happens outside).
 */
@Injectable()
export class UnitOfWork {
  private readonly serialized: boolean;
  private tail: Promise<unknown> = Promise.resolve();
  /** Units queued or running. */
  private pending = 0;
  /** Prepared once: `exec` would parse the statement again for every hot-path transaction. */
  private sqliteControl: { begin: Statement; commit: Statement; rollback: Statement } | undefined;

  constructor(private readonly dataSource: DataSource) {
    this.serialized = dataSource.options.type === 'better-sqlite3';
  }

  /**
   * Runs `work` in one transaction: all of its writes happen, or none. On SQLite it starts as a
   * writer (BEGIN IMMEDIATE): a transaction that starts as a reader and then writes cannot wait
   * for another process's write lock (the admin CLI's), and fails with `database is locked`.
   */
  transaction<T>(work: Work<T>): Promise<T> {
    if (!this.serialized) {
      return this.dataSource.transaction(work);
    }
    return this.serialize(() => this.writeTransactionOnSqlite(work));
  }

  /**
   * Inside a transaction: waits until no other transaction holds `key`, then holds it until this
   * one ends. On PostgreSQL this is a transaction-scoped advisory lock, which also orders
   * instances; on SQLite units already run one at a time.
   */
  async lock(manager: EntityManager, key: string): Promise<void> {
    if (!this.serialized) {
      await manager.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [key]);
    }
  }

  /** True when units run one at a time, so state read in a unit cannot change under it. */
  get isSerialized(): boolean {
    return this.serialized;
  }

  /** Runs reads or a single statement, which is atomic by itself. */
  run<T>(work: Work<T>): Promise<T> {
    return this.serialize(() => work(this.dataSource.manager));
  }

  /**
   * SQLite only: runs `work` synchronously on the shared better-sqlite3 handle, in its turn. A
   * synchronous unit cannot interleave with anything, so hot paths use it with prepared
   * statements instead of TypeORM's query building. With nothing queued it runs at once.
   */
  runOnSqlite<T>(work: (db: SqliteDatabase) => T): Promise<T> {
    const db = this.sqliteHandle();
    if (this.pending === 0) {
      try {
        return Promise.resolve(work(db));
      } catch (error: unknown) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
    }
    return this.serialize(() => Promise.resolve(work(db)));
  }

  /**
   * SQLite only: `work` in one transaction on the shared handle, in its turn, for hot paths that
   * use prepared statements. Nothing else runs on the connection until it ends.
   */
  transactionOnSqlite<T>(work: (db: SqliteDatabase) => Promise<T>): Promise<T> {
    const db = this.sqliteHandle();
    const control = (this.sqliteControl ??= {
      // As a writer: see `transaction`.
      begin: db.prepare('BEGIN IMMEDIATE'),
      commit: db.prepare('COMMIT'),
      rollback: db.prepare('ROLLBACK'),
    });
    return this.serialize(async () => {
      control.begin.run();
      try {
        const result = await work(db);
        control.commit.run();
        return result;
      } catch (error: unknown) {
        if (db.inTransaction) {
          control.rollback.run();
        }
        throw error;
      }
    });
  }

  /**
   * TypeORM's `transaction` begins SQLite transactions DEFERRED and has no option for another
   * mode, so this begins one IMMEDIATE on TypeORM's (single, shared) query runner and then marks
   * the runner as TypeORM's own `startTransaction` would, so that its commit, rollback and any
   * nested transaction (a savepoint) work as usual. unit-of-work.spec.ts holds this to TypeORM.
   */
  private async writeTransactionOnSqlite<T>(work: Work<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    await runner.query('BEGIN IMMEDIATE');
    markTransactionStarted(runner);
    try {
      const result = await work(runner.manager);
      await runner.commitTransaction();
      return result;
    } catch (error: unknown) {
      if (runner.isTransactionActive) {
        await runner.rollbackTransaction();
      }
      throw error;
    } finally {
      await runner.release();
    }
  }

  private sqliteHandle(): SqliteDatabase {
    if (!this.serialized) {
      throw new Error('A SQLite-only unit of work was asked for on PostgreSQL');
    }
    return sqliteConnectionOf(this.dataSource);
  }

  private serialize<T>(task: () => Promise<T>): Promise<T> {
    if (!this.serialized) {
      return task();
    }
    this.pending += 1;
    const result = this.tail.then(task);
    this.tail = result
      .catch(() => undefined)
      .finally(() => {
        this.pending -= 1;
      });
    return result;
  }
}

/** The state TypeORM's `startTransaction` leaves on a runner after its outermost BEGIN. */
function markTransactionStarted(runner: QueryRunner): void {
  Object.assign(runner, { isTransactionActive: true, transactionDepth: 1 });
}
