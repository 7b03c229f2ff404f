import { Injectable } from '@nestjs/common';
import { deleteSelected } from '../database/delete-selected.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { AuditEvent } from './entities/audit-event.entity.js';
import { eventIdFloor } from './event-id.js';

/** Where an export page ended: the next page starts after this row (its id's bytes). */
export interface AuditCursor {
  readonly id: Buffer;
}

/**
 * The retention queries: the window the database enforces (`audit_retention`) and the reads and
 * deletes of `auth_events` by age, on both engines. Every method is one statement, atomic by
 * itself: on SQLite a single writing statement takes the write lock when it starts (waiting up to
 * the busy timeout), as BEGIN IMMEDIATE would, so a batch never fails half-way on a lock.
 * Age is read from the id (decision 0028): its first six bytes are the instant, so `"id" <` the
 * first bytes of a cutoff selects the older rows through the primary key, oldest first.
 */
@Injectable()
export class AuditRetentionRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** Stores the window that the database's DELETE trigger enforces. */
  async setRetentionDays(days: number): Promise<void> {
    const parameter = this.unitOfWork.isSerialized ? '?' : '$1';
    await this.unitOfWork.run((m) =>
      m.query(
        `INSERT INTO "audit_retention" ("id", "retentionDays") VALUES (1, ${parameter}) ` +
          'ON CONFLICT ("id") DO UPDATE SET "retentionDays" = excluded."retentionDays"',
        [days],
      ),
    );
  }

  /**
   * Deletes up to `limit` of the oldest rows that are older than `cutoff` and also older than
   * the stored window by the database's clock, which the trigger checks: a service clock ahead
   * of the database's then leaves the rows between the two for a later run, instead of failing
   * the batch. Returns how many went. On PostgreSQL rows another instance is deleting are skipped.
   */
  deleteOlderThan(cutoff: Date, limit: number): Promise<number> {
    return this.unitOfWork.run((m) => {
      const batch = m
        .createQueryBuilder(AuditEvent, 'old')
        .select('old.id')
        .where('old.id < :cutoff', { cutoff: eventIdFloor(cutoff) })
        .andWhere(`old.id < ${this.databaseCutoff()}`)
        .orderBy('old.id')
        .limit(limit);
      return deleteSelected(m, AuditEvent, batch, !this.unitOfWork.isSerialized);
    });
  }

  /**
   * Up to `limit` rows older than `before`, oldest first (in id order, the order they were
   * told), starting after `after`: a page of an export. Keyset pages read no row twice and hold
   * no transaction open between them (the primary key).
   */
  pageBefore(before: Date, after: AuditCursor | null, limit: number): Promise<AuditEvent[]> {
    return this.unitOfWork.run((m) => {
      const query = m
        .createQueryBuilder(AuditEvent, 'event')
        .where('event.id < :before', { before: eventIdFloor(before) })
        .orderBy('event.id', 'ASC')
        .limit(limit);
      if (after !== null) {
        query.andWhere('event.id > :after', { after: after.id });
      }
      return query.getMany();
    });
  }

  /**
   * The trigger's cutoff, in SQL: now by the database's clock, minus the stored window, as the
   * first six bytes of an id made then (the same expression as the trigger's, migration
   * 1797000000100).
   */
  private databaseCutoff(): string {
    return this.unitOfWork.isSerialized
      ? `(SELECT unhex(printf('%012x', CAST(unixepoch('now', '-' || "retentionDays" || ' days', ` +
          `'subsec') * 1000 AS INTEGER))) FROM "audit_retention" WHERE "id" = 1)`
      : 'decode(lpad(to_hex(floor(extract(epoch FROM now() - make_interval(days => ' +
          '(SELECT "retentionDays" FROM "audit_retention" WHERE "id" = 1))) * 1000)::bigint), ' +
          "12, '0'), 'hex')";
  }
}
