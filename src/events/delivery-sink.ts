import type { Database } from 'better-sqlite3';
import type { EntityManager } from 'typeorm';
import type { AuthEventRecord } from './auth-event.js';

/**
 * The SQL expressions of a PostgreSQL statement that writes an event along with its change, for
 * the facts the statement itself decides (the account and session a presented token belongs to).
 */
export interface ComputedFacts {
  readonly accountId?: string;
  readonly sessionId?: string;
}

/**
 * Where AuthEvents queues each event for the systems that subscribed to it, inside the caller's
 * unit of work, right after the event's audit row (decision 0050): the change, its audit row and
 * its deliveries commit together or not at all. Implemented by the webhooks module, which owns
 * the tables; declared here so that the events do not depend on it.
 */
export abstract class DeliverySink {
  /** Queues `record` (audit id `eventId`) for every subscription that wants it, in `manager`'s transaction. */
  abstract insertWithin(
    manager: EntityManager,
    record: AuthEventRecord,
    eventId: string,
  ): Promise<void>;

  /** insertWithin for a synchronous SQLite unit (UnitOfWork.transactionOnSqlite). */
  abstract insertOnSqlite(db: Database, record: AuthEventRecord, eventId: string): void;

  /**
   * For a PostgreSQL statement that writes the event with its change: a data-modifying CTE body
   * (`INSERT … SELECT … FROM <source>, subscriptions WHERE …`) whose own parameters start at
   * `$first`; `source` names the statement's rows that exist only when the change was made.
   */
  abstract insertSelectSql(first: number, source: string, computed: ComputedFacts): string;

  /** The parameters of insertSelectSql(first, source, computed), in order. */
  abstract insertSelectValues(
    record: AuthEventRecord,
    eventId: string,
    computed: ComputedFacts,
  ): unknown[];

  /**
   * After such a statement committed: `queued` is how many deliveries it wrote (its
   * `count(*)` of the fragment's `RETURNING 1`), so the sender can start at once.
   */
  abstract committed(queued: number): void;
}
