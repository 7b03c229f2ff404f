import { Inject, Injectable, Optional } from '@nestjs/common';
import type { Database as SqliteDatabase, Statement } from 'better-sqlite3';
import { performance } from 'node:perf_hooks';
import { DataSource, type EntityManager, type QueryRunner } from 'typeorm';
import { setTimeout as sleep } from 'node:timers/promises';
import { isSqliteBusy, sqliteBusyTimeoutOf, sqliteConnectionOf } from './driver-handle.js';

type Work<T> = (manager: EntityManager) => Promise<T>;

/**
 * A group commits after this many units even if more are waiting, so that a steady stream of
 * requests cannot keep the first one's answer waiting. 64 refresh units take about 3 ms here,
 * several times the one fsync they share (about 0.4 ms), so a larger group saves little more.
 */
export const GROUP_MAX_UNITS = 64;
/**
 * ...or once it has held the write lock this long (TypeORM units, a login's or a registration's,
 * take far longer than a refresh's): the added wait of the group's first unit stays bounded, and
 * the fsync stays under a tenth of the time the lock is held.
 */
export const GROUP_MAX_MS = 5;

/** When a group stops taking units; GROUP_MAX_UNITS and GROUP_MAX_MS unless a test says otherwise. */
export interface GroupLimits {
  readonly maxUnits: number;
  readonly maxMs: number;
}

/**
 * Injection token of the group limits. Only tests provide it: a test that checks which units
 * share a group must not depend on how loaded the machine is, and under load 5 ms can pass
 * between two units told in the same turn.
 */
export const GROUP_LIMITS = Symbol('GROUP_LIMITS');
/**
 * While another process holds SQLite's write lock, the group tries again after this long at
 * first, then after twice as long each time up to LOCK_RETRY_MAX_MS. The admin CLI's purge holds
 * the lock about 10 ms per batch and rests as long (5 ms at least) between batches, so a retry
 * every few milliseconds finds the gap; a try that fails costs a few microseconds.
 */
export const LOCK_RETRY_FIRST_MS = 1;
export const LOCK_RETRY_MAX_MS = 4;

/** A unit waiting for its turn on SQLite. */
interface QueuedUnit {
  readonly execute: () => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly afterCommit: (() => void)[];
  /** performance.now() when it was queued: it waits for the write lock until `since + timeout`. */
  readonly since: number;
  /** A synchronous read (runOnSqlite): it needs no transaction, so no write lock. */
  readonly readsOnly: boolean;
}

/** How a unit of a group ended, told to its caller only once the group's COMMIT returned. */
type UnitEnd = { readonly unit: QueuedUnit; readonly broken: boolean } & (
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: Error }
);

interface SqliteControl {
  readonly begin: Statement;
  readonly commit: Statement;
  readonly rollback: Statement;
  readonly savepoint: Statement;
  readonly release: Statement;
  readonly rollbackTo: Statement;
  /**
   * Puts the connection's busy timeout back for every other statement. (A PRAGMA acts when it is
   * prepared, not when a prepared one runs again, so it is executed, which costs about 0.5 µs.)
   */
  readonly restoreBusyTimeout: string;
  /** The connection's busy timeout: the longest a unit waits for the write lock in all. */
  readonly busyTimeoutMs: number;
}

/**
 * The only way services touch the database.
 *
 * TypeORM on better-sqlite3 shares one connection between all requests, so a transaction that
 * awaits would let other requests' statements run inside it, and its rollback would silently
 * discard their acknowledged writes. On SQLite every unit therefore runs alone, in arrival
 * order; SQLite serialises writers anyway, and no unit ever awaits anything but the database
 * (password hashing happens outside).
 *
 * Group commit (decision 0022): on SQLite, consecutive units share one transaction and so one
 * fsync of the write-ahead log. Each unit runs in its own savepoint, so a failing one rolls back
 * alone; the group commits once no unit is waiting (units that arrive in the same turn of the
 * event loop join it) or at GROUP_MAX_UNITS / GROUP_MAX_MS. No unit's promise settles before
 * the COMMIT returned: not a write's, whose answer must be durable, and not a read's, which may
 * have seen the group's writes. If the COMMIT fails, or a failure made SQLite abandon the whole
 * transaction, every unit of the group is rejected.
 */
@Injectable()
export class UnitOfWork {
  private readonly serialized: boolean;
  private readonly queue: QueuedUnit[] = [];
  private draining = false;
  /**
   * SQLite: the group is waiting, on a timer, for another process's write lock. No transaction
   * is open and no unit runs, so synchronous reads may run at once, as when nothing is queued.
   */
  private awaitingLock = false;
  /** SQLite: the unit running now (units run one at a time). */
  private current: QueuedUnit | undefined;
  /** PostgreSQL: the after-commit work of each open transaction, by its manager. */
  private readonly openTransactions = new WeakMap<EntityManager, (() => void)[]>();
  /** Prepared once: `exec` would parse the statement again for every group and unit. */
  private sqliteControl: SqliteControl | undefined;

  private readonly limits: GroupLimits;

  constructor(
    private readonly dataSource: DataSource,
    @Optional() @Inject(GROUP_LIMITS) limits?: GroupLimits,
  ) {
    this.serialized = dataSource.options.type === 'better-sqlite3';
    this.limits = limits ?? { maxUnits: GROUP_MAX_UNITS, maxMs: GROUP_MAX_MS };
  }

  /**
   * Runs `work` in one transaction: all of its writes happen, or none. On SQLite it is a savepoint
   * in the group's transaction, which starts as a writer (BEGIN IMMEDIATE): a transaction that
   * starts as a reader and then writes cannot wait for another process's write lock (the admin
   * CLI's), and fails with `database is locked`.
   */
  async transaction<T>(work: Work<T>): Promise<T> {
    if (!this.serialized) {
      const afterCommit: (() => void)[] = [];
      const result = await this.dataSource.transaction((m) => {
        this.openTransactions.set(m, afterCommit);
        return work(m);
      });
      runAll(afterCommit);
      return result;
    }
    return this.enqueue(() => this.typeOrmUnitOnSqlite(work));
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

  /**
   * Inside a unit (the manager of a `transaction` on PostgreSQL; any unit on SQLite): runs `task`
   * once the unit's writes committed, before its caller hears of it; never if they did not.
   */
  afterCommit(manager: EntityManager | null, task: () => void): void {
    const tasks = this.serialized
      ? this.current?.afterCommit
      : manager === null
        ? undefined
        : this.openTransactions.get(manager);
    if (tasks === undefined) {
      throw new Error('afterCommit was asked for outside a transaction of the unit of work');
    }
    tasks.push(task);
  }

  /** True when units run one at a time, so state read in a unit cannot change under it. */
  get isSerialized(): boolean {
    return this.serialized;
  }

  /** Runs reads or a single statement, which is atomic by itself. */
  run<T>(work: Work<T>): Promise<T> {
    if (!this.serialized) {
      return work(this.dataSource.manager);
    }
    return this.enqueue(() => this.typeOrmUnitOnSqlite(work));
  }

  /**
   * SQLite only: runs `work` synchronously on the shared better-sqlite3 handle, in its turn. A
   * synchronous unit cannot interleave with anything, so hot paths use it with prepared
   * statements instead of TypeORM's query building. With no group open (nothing queued, or the
   * queued units waiting for another process's write lock) it runs at once, outside any
   * transaction (it can only see committed writes then). `work` must only read: it may run
   * outside the group, next to another process's write.
   */
  runOnSqlite<T>(work: (db: SqliteDatabase) => T): Promise<T> {
    const db = this.sqliteHandle();
    if (!this.draining || this.awaitingLock) {
      try {
        return Promise.resolve(work(db));
      } catch (error: unknown) {
        return Promise.reject(asError(error));
      }
    }
    return this.enqueue(() => Promise.resolve(work(db)), true);
  }

  /**
   * SQLite only: `work` in one transaction (its savepoint in the group's) on the shared handle, in
   * its turn, for hot paths that use prepared statements. Nothing else runs on the connection
   * until it ends.
   */
  transactionOnSqlite<T>(work: (db: SqliteDatabase) => Promise<T>): Promise<T> {
    const db = this.sqliteHandle();
    return this.enqueue(() => work(db));
  }

  /**
   * A TypeORM unit inside the group: the savepoint is the unit of work's, and TypeORM's (single,
   * shared) query runner is marked as TypeORM's own `startTransaction` would mark it after its
   * outermost BEGIN, so that a nested transaction or a `save` in the unit takes a savepoint of
   * its own instead of beginning a transaction. unit-of-work.spec.ts holds this to TypeORM.
   */
  private async typeOrmUnitOnSqlite<T>(work: Work<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    markTransactionStarted(runner);
    try {
      return await work(runner.manager);
    } finally {
      markTransactionEnded(runner);
      await runner.release();
    }
  }

  private sqliteHandle(): SqliteDatabase {
    if (!this.serialized) {
      throw new Error('A SQLite-only unit of work was asked for on PostgreSQL');
    }
    return sqliteConnectionOf(this.dataSource);
  }

  private control(): SqliteControl {
    if (this.sqliteControl === undefined) {
      const db = this.sqliteHandle();
      const busyTimeoutMs = sqliteBusyTimeoutOf(db);
      this.sqliteControl = {
        // As a writer: see `transaction`.
        begin: db.prepare('BEGIN IMMEDIATE'),
        commit: db.prepare('COMMIT'),
        rollback: db.prepare('ROLLBACK'),
        savepoint: db.prepare('SAVEPOINT keygate_unit'),
        release: db.prepare('RELEASE keygate_unit'),
        rollbackTo: db.prepare('ROLLBACK TO keygate_unit'),
        restoreBusyTimeout: `PRAGMA busy_timeout = ${busyTimeoutMs}`,
        busyTimeoutMs,
      };
    }
    return this.sqliteControl;
  }

  private enqueue<T>(execute: () => Promise<T>, readsOnly = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        execute,
        resolve: resolve as (value: unknown) => void,
        reject,
        afterCommit: [],
        since: performance.now(),
        readsOnly,
      });
      if (!this.draining) {
        this.draining = true;
        void this.drain();
      }
    });
  }

  /** Runs the queue group by group until it is empty. Never rejects: units carry the errors. */
  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        // Units told in this turn of the event loop join the group. They gather before the group
        // takes the write lock, not while it holds it: the lock stays free while this process
        // parses requests and writes answers, so another process (the admin CLI's purge) finds
        // it free between groups, as it did between single transactions.
        await new Promise<void>((resolve) => setImmediate(resolve));
        await this.runGroup();
      }
    } finally {
      this.draining = false;
    }
  }

  private async runGroup(): Promise<void> {
    let db: SqliteDatabase;
    let control: SqliteControl;
    try {
      db = this.sqliteHandle();
      control = this.control();
    } catch (error: unknown) {
      // The connection is gone: the unit that would have started the group fails, as it would
      // have alone, and the next one tries again.
      this.queue.shift()?.reject(asError(error));
      return;
    }
    if (!(await this.beginGroup(db, control))) {
      return;
    }
    const started = performance.now();
    const ends: UnitEnd[] = [];
    let abandoned: Error | undefined;
    try {
      while (
        ends.length < this.limits.maxUnits &&
        performance.now() - started < this.limits.maxMs
      ) {
        if (this.queue.length === 0) {
          break;
        }
        const end = await this.runUnit(db, control, this.queue.shift() as QueuedUnit);
        ends.push(end);
        if (!db.inTransaction || end.broken) {
          // SQLite rolled the whole transaction back (SQLITE_FULL, an I/O error...), or a failed
          // unit's writes could not be undone alone: every unit of the group fails with it.
          abandoned = end.ok ? new Error('The group transaction was rolled back') : end.error;
          break;
        }
      }
      if (abandoned === undefined) {
        control.commit.run();
      }
    } catch (error: unknown) {
      abandoned = asError(error);
    } finally {
      if (abandoned !== undefined && db.inTransaction) {
        rollBackQuietly(control);
      }
      settle(ends, abandoned);
    }
  }

  /**
   * Opens the group's transaction as a writer. SQLite's own wait for a lock held by another
   * process (the busy handler) sleeps in the thread, and so stalls every request of this process,
   * reads that need no lock included; so BEGIN IMMEDIATE is tried without it and, while the lock
   * is taken, again on a short timer, the event loop serving other requests meanwhile. A unit
   * waits so at most the connection's busy timeout (`Database__StatementTimeoutMs`) since it was
   * queued, and then fails with SQLite's own `database is locked` error, as it would have after
   * the busy handler's wait. False when no group was opened; the queue then holds only units
   * still within their time.
   */
  private async beginGroup(db: SqliteDatabase, control: SqliteControl): Promise<boolean> {
    let pause = LOCK_RETRY_FIRST_MS;
    for (;;) {
      try {
        db.exec('PRAGMA busy_timeout = 0');
        try {
          control.begin.run();
        } finally {
          db.exec(control.restoreBusyTimeout);
        }
        return true;
      } catch (error: unknown) {
        if (!isSqliteBusy(error)) {
          // The connection is broken: the unit that would have started the group fails, as it
          // would have alone, and the next one tries again.
          if (db.inTransaction) {
            rollBackQuietly(control);
          }
          this.queue.shift()?.reject(asError(error));
          return false;
        }
        this.serveReads();
        const now = performance.now();
        while (this.queue.length > 0 && now - this.queue[0].since >= control.busyTimeoutMs) {
          this.queue.shift()?.reject(asError(error));
        }
        if (this.queue.length === 0) {
          return false;
        }
        const left = this.queue[0].since + control.busyTimeoutMs - now;
        this.awaitingLock = true;
        try {
          await sleep(Math.min(pause, left));
        } finally {
          this.awaitingLock = false;
        }
        pause = Math.min(pause * 2, LOCK_RETRY_MAX_MS);
      }
    }
  }

  /**
   * While the group waits for the write lock, the synchronous reads queued behind or before it
   * run at once, outside any transaction, as they would have with nothing queued: they see
   * committed writes only, and nothing they saw can be rolled back.
   */
  private serveReads(): void {
    const reads: QueuedUnit[] = [];
    let kept = 0;
    for (const unit of this.queue) {
      if (unit.readsOnly) {
        reads.push(unit);
      } else {
        this.queue[kept++] = unit;
      }
    }
    this.queue.length = kept;
    for (const unit of reads) {
      try {
        void unit.execute().then(unit.resolve, unit.reject);
      } catch (error: unknown) {
        unit.reject(asError(error));
      }
    }
  }

  private async runUnit(
    db: SqliteDatabase,
    control: SqliteControl,
    unit: QueuedUnit,
  ): Promise<UnitEnd> {
    this.current = unit;
    try {
      control.savepoint.run();
      const value = await unit.execute();
      control.release.run();
      return { unit, ok: true, value, broken: false };
    } catch (error: unknown) {
      return { unit, ok: false, error: asError(error), broken: !undo(db, control) };
    } finally {
      this.current = undefined;
    }
  }
}

function rollBackQuietly(control: SqliteControl): void {
  try {
    control.rollback.run();
  } catch {
    // The connection is broken; the units are rejected whatever happened here.
  }
}

/** Rolls a failed unit back to its savepoint; false if that failed with the transaction open. */
function undo(db: SqliteDatabase, control: SqliteControl): boolean {
  if (!db.inTransaction) {
    return true;
  }
  try {
    control.rollbackTo.run();
    control.release.run();
    return true;
  } catch {
    return false;
  }
}

/** Tells each unit of a group how it ended, now that the group's fate is known. */
function settle(ends: readonly UnitEnd[], abandoned: Error | undefined): void {
  for (const end of ends) {
    if (!end.ok) {
      end.unit.reject(end.error);
    } else if (abandoned !== undefined) {
      end.unit.reject(abandoned);
    } else {
      try {
        runAll(end.unit.afterCommit);
      } finally {
        end.unit.resolve(end.value);
      }
    }
  }
}

function runAll(tasks: readonly (() => void)[]): void {
  for (const task of tasks) {
    task();
  }
}

/**
 * What a unit's caller is rejected with: the error itself, or an Error saying what was thrown.
 * An error made in another realm fails `instanceof Error`, as better-sqlite3's do under Jest
 * (each test file has its own realm; the driver's addon keeps the error class of the first that
 * loaded it): it is made again in this one with its message and code, so that `database is
 * locked` keeps both, where `String(error)` would have put its class name in the message.
 */
function asError(error: unknown): Error {
  if (error instanceof Error) {
    return error;
  }
  if (typeof error === 'object' && error !== null && typeof (error as Error).message === 'string') {
    const { message, code } = error as { message: string; code?: unknown };
    return Object.assign(new Error(message, { cause: error }), code === undefined ? {} : { code });
  }
  return new Error(String(error));
}

/** The state TypeORM's `startTransaction` leaves on a runner after its outermost BEGIN. */
function markTransactionStarted(runner: QueryRunner): void {
  Object.assign(runner, { isTransactionActive: true, transactionDepth: 1 });
}

/** The state TypeORM's `commitTransaction` leaves on a runner after its outermost COMMIT. */
function markTransactionEnded(runner: QueryRunner): void {
  Object.assign(runner, { isTransactionActive: false, transactionDepth: 0 });
}
