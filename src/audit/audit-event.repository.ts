import { Injectable } from '@nestjs/common';
import type { Database, Statement } from 'better-sqlite3';
import { DataSource, type EntityManager } from 'typeorm';
import { sqliteConnectionOf } from '../database/driver-handle.js';
import { EntityRows } from '../database/entity-rows.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { AuditEvent } from './entities/audit-event.entity.js';
import { RandomSource } from '../common/random/random-source.js';
import { AuditSink } from '../events/audit-sink.js';
import type { AuthEventRecord } from '../events/auth-event.js';
import { toAuditEvent } from './audit-row.js';
import { EventIdGenerator } from './event-id.js';

/**
 * The queries on `auth_events`, on both engines; the only code that names the table. The
 * application only ever inserts and reads here (the database refuses anything else).
 */
@Injectable()
export class AuditEventRepository implements AuditSink {
  private readonly rows: EntityRows<AuditEvent>;
  /** One per process: ids only grow, so ties on `occurredAt` keep the order events happened. */
  private readonly ids: EventIdGenerator;
  private sqliteInsert: Statement<unknown[]> | undefined;

  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly dataSource: DataSource,
    random: RandomSource,
  ) {
    this.rows = new EntityRows(dataSource, AuditEvent);
    this.ids = new EventIdGenerator(random);
  }

  /** The row the trail stores for `record`, with a new id. */
  rowOf(record: AuthEventRecord): AuditEvent {
    return toAuditEvent(record, this.ids.next(record.at));
  }

  /**
   * Stores one row inside the caller's unit of work, so that it commits with the change it records
   * or not at all. Every refresh and login adds one, so it is a prepared statement (its columns
   * from the entity) on SQLite, where TypeORM's insert building cost more than the write itself,
   * and one parameterised INSERT on PostgreSQL.
   */
  async insertWithin(manager: EntityManager, record: AuthEventRecord): Promise<void> {
    if (this.unitOfWork.isSerialized) {
      this.insertOnSqlite(sqliteConnectionOf(this.dataSource), record);
      return;
    }
    await manager.query(this.insertSql('postgres'), this.rows.values(this.rowOf(record)));
  }

  /** insertWithin for a synchronous SQLite unit (UnitOfWork.transactionOnSqlite). */
  insertOnSqlite(db: Database, record: AuthEventRecord): void {
    (this.sqliteInsert ??= db.prepare(this.insertSql('sqlite'))).run(
      ...this.rows.values(this.rowOf(record)),
    );
  }

  /** The audit INSERT, for the statements that add it to their own (PostgreSQL's rotation). */
  insertSql(style: 'sqlite' | 'postgres', first = 1): string {
    return (
      `INSERT INTO "${this.rows.table}" (${this.rows.names()}) ` +
      `VALUES (${this.rows.placeholders(style, first)})`
    );
  }

  /**
   * For a PostgreSQL statement that writes the row along with its change: `INSERT ... SELECT`
   * with the `computed` columns as the SQL expressions given (over the statement's own tables)
   * and the others as typed parameters from `$first`; insertSelectValues gives their values.
   */
  insertSelectSql(first: number, computed: Partial<Record<keyof AuditEvent, string>>): string {
    let next = first;
    const expressions = this.rows.columns.map((column) => {
      const expression = computed[column.propertyName as keyof AuditEvent];
      if (expression !== undefined) {
        return expression;
      }
      next += 1;
      return `$${next - 1}::${this.dataSource.driver.normalizeType(column)}`;
    });
    return `INSERT INTO "${this.rows.table}" (${this.rows.names()}) SELECT ${expressions.join(', ')}`;
  }

  /** The parameters of insertSelectSql(first, computed) for `record`'s row, in order. */
  insertSelectValues(
    record: AuthEventRecord,
    computed: Partial<Record<keyof AuditEvent, string>>,
  ): unknown[] {
    const values = this.rows.values(this.rowOf(record));
    return values.filter((_value, i) => !(this.rows.columns[i].propertyName in computed));
  }

  /** The newest `limit` events of one user, newest first (IDX_auth_events_userId_occurredAt). */
  latestForUser(userId: string, limit: number): Promise<AuditEvent[]> {
    return this.unitOfWork.run((m) =>
      m.find(AuditEvent, {
        where: { userId },
        order: { occurredAt: 'DESC', id: 'DESC' },
        take: limit,
      }),
    );
  }
}
