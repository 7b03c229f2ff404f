import { Injectable, Logger } from '@nestjs/common';
import type { Database } from 'better-sqlite3';
import type { EntityManager } from 'typeorm';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { Clock } from '../common/time/clock.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { forRequest } from '../logging/log-fields.js';
import { AuditSink } from './audit-sink.js';
import { DeliverySink } from './delivery-sink.js';
import type { AuthEvent, AuthEventRecord } from './auth-event.js';

export type AuthEventListener = (record: AuthEventRecord) => void;

/**
 * The one place services tell what happened (decision 0023). An event is recorded inside the unit
 * of work of the change it tells about: its audit row (`auth_events`) and its webhook deliveries
 * (decision 0050) are written in the same transaction, so the change and its rows commit together
 * or not at all, and a row that cannot be written fails the change. Listeners (metrics, extensions) hear of the event only once that
 * transaction committed; they run synchronously and must not block. A listener that throws is
 * logged and the others still run, so a broken listener never turns a success into an error.
 */
@Injectable()
export class AuthEvents {
  private readonly logger = new Logger(AuthEvents.name);
  private readonly listeners: AuthEventListener[] = [];

  constructor(
    private readonly clock: Clock,
    private readonly unitOfWork: UnitOfWork,
    private readonly audit: AuditSink,
    private readonly deliveries: DeliverySink,
  ) {}

  /** Listeners hear of each event after its transaction committed, never of a rolled-back one. */
  subscribe(listener: AuthEventListener): void {
    this.listeners.push(listener);
  }

  /**
   * Inside a transaction of the unit of work (`manager` is its manager): writes the event's audit
   * row in it, and tells listeners once it committed. Rejects if the row cannot be written; the
   * caller lets that fail the unit, which rolls the change back.
   */
  async record(manager: EntityManager, event: AuthEvent, origin: RequestOrigin): Promise<void> {
    const record = this.recordOf(event, origin);
    const eventId = await this.audit.insertWithin(manager, record);
    await this.deliveries.insertWithin(manager, record, eventId);
    this.unitOfWork.afterCommit(manager, () => this.notify(record));
  }

  /** record() inside a synchronous SQLite unit (UnitOfWork.transactionOnSqlite). */
  recordOnSqlite(db: Database, event: AuthEvent, origin: RequestOrigin): void {
    const record = this.recordOf(event, origin);
    this.deliveries.insertOnSqlite(db, record, this.audit.insertOnSqlite(db, record));
    this.unitOfWork.afterCommit(null, () => this.notify(record));
  }

  /**
   * An event that changes nothing else (an unknown e-mail's failed login, a refused token): its
   * row is a unit of its own, which joins the next group commit on SQLite. Resolves once the row
   * committed, so the answer leaves only then; rejects (a 500) if it could not be written.
   */
  recordAlone(event: AuthEvent, origin: RequestOrigin): Promise<void> {
    return this.unitOfWork.transaction((m) => this.record(m, event, origin));
  }

  /**
   * For a flow whose refusals are decided where nothing is written (a synchronous check, a
   * thrown error): events recorded through the returned PendingEvents are each a unit of their
   * own, and `settle` lets the flow's answer, or its error, leave only once they committed.
   */
  pending(): PendingEvents {
    return new PendingEvents(this);
  }

  /**
   * Tells listeners of an event whose audit row (and deliveries) a statement of its own wrote and
   * committed (PostgreSQL's one-statement rotation).
   */
  committed(event: AuthEvent, origin: RequestOrigin, at: Date): void {
    this.notify({ event, origin, at });
  }

  private recordOf(event: AuthEvent, origin: RequestOrigin): AuthEventRecord {
    return { event, origin, at: this.clock.now() };
  }

  private notify(record: AuthEventRecord): void {
    for (const listener of this.listeners) {
      try {
        listener(record);
      } catch (error) {
        this.logger.error(
          `A listener failed on the ${record.event.type} event: ${(error as Error).message}`,
          forRequest(record.origin.requestId),
        );
      }
    }
  }
}

/** See AuthEvents.pending(). */
export class PendingEvents {
  private readonly records: Promise<void>[] = [];

  constructor(private readonly events: AuthEvents) {}

  record(event: AuthEvent, origin: RequestOrigin): void {
    const recorded = this.events.recordAlone(event, origin);
    // Awaited in settle(); this handler only keeps Node from calling the rejection unhandled.
    recorded.catch(() => undefined);
    this.records.push(recorded);
  }

  /**
   * `answer`, once every event recorded so far committed. If one could not be written, that
   * failure (a 500) is the answer instead: no refusal leaves without its audit row.
   */
  async settle<T>(answer: Promise<T>): Promise<T> {
    try {
      const value = await answer;
      await Promise.all(this.records);
      return value;
    } catch (error: unknown) {
      await Promise.all(this.records);
      throw error;
    }
  }
}
