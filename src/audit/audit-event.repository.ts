import { Injectable } from '@nestjs/common';
import type { Statement } from 'better-sqlite3';
import { DataSource } from 'typeorm';
import { EntityRows } from '../database/entity-rows.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { AuditEvent } from './entities/audit-event.entity.js';

/**
 * The queries on `auth_events`, on both engines; the only code that names the table. The
 * application only ever inserts and reads here (the database refuses anything else).
 */
@Injectable()
export class AuditEventRepository {
  private readonly rows: EntityRows<AuditEvent>;
  private sqliteInsert: Statement<unknown[]> | undefined;

  constructor(
    private readonly unitOfWork: UnitOfWork,
    dataSource: DataSource,
  ) {
    this.rows = new EntityRows(dataSource, AuditEvent);
  }

  /**
   * Stores a batch, whole or not at all. Every refresh and login adds a row, so on SQLite, where
   * TypeORM's insert building cost more than the write itself, it is a prepared statement (its
   * columns from the entity) run per row in one transaction; on PostgreSQL one multi-row INSERT.
   */
  insertBatch(batch: readonly AuditEvent[]): Promise<void> {
    if (!this.unitOfWork.isSerialized) {
      return this.unitOfWork.run(async (m) => {
        await m.insert(AuditEvent, [...batch]);
      });
    }
    return this.unitOfWork.transactionOnSqlite((db) => {
      const insert = (this.sqliteInsert ??= db.prepare(
        `INSERT INTO "${this.rows.table}" (${this.rows.names()}) ` +
          `VALUES (${this.rows.placeholders('sqlite')})`,
      ));
      for (const row of batch) {
        insert.run(...this.rows.values(row));
      }
      return Promise.resolve();
    });
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
