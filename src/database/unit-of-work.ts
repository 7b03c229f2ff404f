import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';

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

  constructor(private readonly dataSource: DataSource) {
    this.serialized = dataSource.options.type === 'better-sqlite3';
  }

  /** Runs `work` in one transaction: all of its writes happen, or none. */
  transaction<T>(work: Work<T>): Promise<T> {
    return this.serialize(() => this.dataSource.transaction(work));
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

  private serialize<T>(task: () => Promise<T>): Promise<T> {
    if (!this.serialized) {
      return task();
    }
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
