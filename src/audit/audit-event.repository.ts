import { Injectable, Optional } from '@nestjs/common';
import type { Database, Statement } from 'better-sqlite3';
import { DataSource, type EntityManager } from 'typeorm';
import { sqliteConnectionOf } from '../database/driver-handle.js';
import { EntityRows } from '../database/entity-rows.js';
import { postgresTypeOf } from '../database/postgres-types.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { AuditEvent } from './entities/audit-event.entity.js';
import { RandomSource } from '../common/random/random-source.js';
import { AuditSink } from '../events/audit-sink.js';
import type { AuthEventRecord } from '../events/auth-event.js';
import {
  storedUserAgent,
  toAuditEntries,
  toAuditEvent,
  type AuditEntry,
  type AuditRecordRow,
} from './audit-row.js';
import { EventIdGenerator, eventIdBytes, eventIdFloor } from './event-id.js';
import { UserAgentRepository } from './user-agent.repository.js';

/**
 * The queries on `auth_events`, on both engines; the only code that names the table. The
 * application only ever inserts and reads here (the database refuses anything else). Rows are
 * laid out as decision 0028 says: the id as its 16 bytes (which hold the instant), the user agent
 * by its id in `user_agents` (UserAgentRepository), looked up or added in the same unit.
 */
@Injectable()
export class AuditEventRepository implements AuditSink {
  private readonly rows: EntityRows<AuditEvent>;
  /** One per process: ids only grow, so events of one millisecond keep the order they happened. */
  private readonly ids: EventIdGenerator;
  /** Where `userAgentId` is among the columns: the value stores the reference (or the text). */
  private readonly userAgentIndex: number;
  private sqliteInsert: Statement<unknown[]> | undefined;
  private postgresInsert: string | undefined;

  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly dataSource: DataSource,
    random: RandomSource,
    // Nest injects the module's; built without one (by hand, or in a test module that lists
    // only this repository), it makes its own.
    @Optional()
    private readonly userAgents: UserAgentRepository = new UserAgentRepository(unitOfWork),
  ) {
    this.rows = new EntityRows(dataSource, AuditEvent);
    this.ids = new EventIdGenerator(random);
    this.userAgentIndex = this.rows.columns.indexOf(this.rows.column('userAgentId'));
  }

  /** The row the trail stores for `record`, with a new id. */
  rowOf(record: AuthEventRecord): AuditRecordRow {
    return toAuditEvent(record, this.ids.next(record.at));
  }

  /** The driver's values of `row` in column order, its user agent given as `userAgent`. */
  private valuesOf(row: AuditRecordRow, userAgent: number | string | null): unknown[] {
    const stored = Object.assign(new AuditEvent(), {
      id: eventIdBytes(row.id),
      type: row.type,
      userId: row.userId,
      email: row.email,
      ip: row.ip,
      userAgentId: null,
      requestId: row.requestId,
      details: row.details,
    });
    const values = this.rows.values(stored);
    values[this.userAgentIndex] = userAgent;
    return values;
  }

  /**
   * PostgreSQL: the SQL of one value, `$n` typed, or for the user agent the id of the text in
   * `$n` (added if new) — so an insert takes the text and stores the reference, in one trip.
   */
  private postgresValue(column: AuditEventColumn, placeholder: string): string {
    return column.propertyName === 'userAgentId'
      ? this.userAgents.postgresIdSql(placeholder)
      : `${placeholder}::${postgresTypeOf(this.dataSource, column)}`;
  }

  /**
   * Stores one row inside the caller's unit of work, so that it commits with the change it records
   * or not at all. Every refresh and login adds one, so it is a prepared statement (its columns
   * from the entity) on SQLite, where TypeORM's insert building cost more than the write itself,
   * and one parameterised INSERT on PostgreSQL.
   */
  async insertWithin(manager: EntityManager, record: AuthEventRecord): Promise<string> {
    if (this.unitOfWork.isSerialized) {
      return this.insertOnSqlite(sqliteConnectionOf(this.dataSource), record);
    }
    const row = this.rowOf(record);
    await manager.query(this.postgresInsertSql(), this.valuesOf(row, row.userAgent));
    return row.id;
  }

  /** insertWithin for a synchronous SQLite unit (UnitOfWork.transactionOnSqlite). */
  insertOnSqlite(db: Database, record: AuthEventRecord): string {
    const row = this.rowOf(record);
    const userAgentId = this.userAgents.idOnSqlite(db, row.userAgent);
    (this.sqliteInsert ??= db.prepare(
      `INSERT INTO "${this.rows.table}" (${this.rows.names()}) ` +
        `VALUES (${this.rows.placeholders('sqlite')})`,
    )).run(...this.valuesOf(row, userAgentId));
    return row.id;
  }

  private postgresInsertSql(): string {
    if (this.postgresInsert === undefined) {
      const values = this.rows.columns.map((column, i) => this.postgresValue(column, `$${i + 1}`));
      this.postgresInsert = `INSERT INTO "${this.rows.table}" (${this.rows.names()}) VALUES (${values.join(', ')})`;
    }
    return this.postgresInsert;
  }

  /**
   * For a PostgreSQL statement that writes the row along with its change: `INSERT ... SELECT`
   * with the `computed` columns as the SQL expressions given (over the statement's own tables)
   * and the others as typed parameters from `$first`; insertSelectValues gives their values. The
   * user agent takes two parameters, its remembered id and its text, so that a known one costs no
   * look-up (decision 0032); the statement should end with insertSelectReturning, and its caller
   * pass the returned `userAgentId` to insertSelectCommitted once the statement has committed.
   */
  insertSelectSql(first: number, computed: Partial<Record<keyof AuditEvent, string>>): string {
    let next = first;
    const expressions = this.rows.columns.map((column) => {
      const expression = computed[column.propertyName as keyof AuditEvent];
      if (expression !== undefined) {
        return expression;
      }
      if (column.propertyName === 'userAgentId') {
        next += 2;
        return this.userAgents.postgresRememberedIdSql(`$${next - 2}`, `$${next - 1}`);
      }
      next += 1;
      return `$${next - 1}::${postgresTypeOf(this.dataSource, column)}`;
    });
    return `INSERT INTO "${this.rows.table}" (${this.rows.names()}) SELECT ${expressions.join(', ')}`;
  }

  /** The RETURNING clause of insertSelectSql's statement: the stored user agent's id. */
  readonly insertSelectReturning = 'RETURNING "userAgentId"';

  /**
   * The parameters of insertSelectSql(first, computed) for `record`'s row, in order; `row` when
   * the caller made it first (rowOf), to name the event's id in the same statement.
   */
  insertSelectValues(
    record: AuthEventRecord,
    computed: Partial<Record<keyof AuditEvent, string>>,
    row: AuditRecordRow = this.rowOf(record),
  ): unknown[] {
    const values: unknown[] = [];
    this.valuesOf(row, row.userAgent).forEach((value, i) => {
      const column = this.rows.columns[i];
      if (column.propertyName in computed) {
        return;
      }
      if (column === this.rows.columns[this.userAgentIndex]) {
        const known = this.userAgents.rememberedIdOnPostgres(row.userAgent);
        values.push(known, known === null ? value : null);
      } else {
        values.push(value);
      }
    });
    return values;
  }

  /**
   * After insertSelectSql's statement for `record` has committed (never before: a row it added to
   * `user_agents` would be gone with a rollback), remembers the id it stored for the user agent.
   */
  insertSelectCommitted(record: AuthEventRecord, storedUserAgentId: number | null): void {
    this.userAgents.rememberOnPostgres(storedUserAgent(record.origin), storedUserAgentId);
  }

  /**
   * At most `limit` events matching `query`, newest first (by id, which orders them as they were
   * told). `before` is the id of the last event of the previous page. Every read is a range of
   * the primary key (its ids hold the instant, decision 0028), or of IDX_auth_events_userId for
   * one account's events.
   */
  async page(query: AuditPageQuery): Promise<AuditEntry[]> {
    const rows = await this.unitOfWork.run((m) => {
      const builder = m.createQueryBuilder(AuditEvent, 'e');
      const where = (condition: string, parameters: Record<string, unknown>): void => {
        builder.andWhere(condition, parameters);
      };
      // A lower bound that every id meets, so the first page is a range read too.
      where('e.id >= :from', { from: eventIdFloor(query.from ?? new Date(0)) });
      if (query.to !== null) {
        where('e.id < :to', { to: eventIdFloor(query.to) });
      }
      if (query.before !== null) {
        where('e.id < :before', { before: eventIdBytes(query.before) });
      }
      if (query.userId !== null) {
        where('e.userId = :userId', { userId: query.userId });
      }
      if (query.type !== null) {
        where('e.type = :type', { type: query.type });
      }
      return builder.orderBy('e.id', 'DESC').limit(query.limit).getMany();
    });
    return toAuditEntries(rows, this.userAgents);
  }

  /** The newest `limit` events of one user, newest first (IDX_auth_events_userId). */
  async latestForUser(userId: string, limit: number): Promise<AuditEntry[]> {
    const rows = await this.unitOfWork.run((m) =>
      m.find(AuditEvent, { where: { userId }, order: { id: 'DESC' }, take: limit }),
    );
    return toAuditEntries(rows, this.userAgents);
  }
}

type AuditEventColumn = EntityRows<AuditEvent>['columns'][number];

/** What AuditEventRepository.page reads; null: no such filter. */
export interface AuditPageQuery {
  readonly userId: string | null;
  readonly type: string | null;
  /** Events at or after this instant. */
  readonly from: Date | null;
  /** Events before this instant. */
  readonly to: Date | null;
  /** The id (UUID text) of the last event already seen. */
  readonly before: string | null;
  readonly limit: number;
}
