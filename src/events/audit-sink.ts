import type { Database } from 'better-sqlite3';
import type { EntityManager } from 'typeorm';
import type { AuthEventRecord } from './auth-event.js';

/**
 * Where AuthEvents writes each event's audit row, inside the caller's unit of work. Implemented by
 * the audit module's repository (src/audit), which owns the table; declared here so that the events
 * do not depend on the audit module, which depends on them.
 */
export abstract class AuditSink {
  /** Writes the row of `record` in the transaction whose manager is `manager`; its event id. */
  abstract insertWithin(manager: EntityManager, record: AuthEventRecord): Promise<string>;

  /** insertWithin for a synchronous SQLite unit (UnitOfWork.transactionOnSqlite). */
  abstract insertOnSqlite(db: Database, record: AuthEventRecord): string;
}
