import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { AuthEventRecord } from '../events/auth-event.js';
import { AuthEvents } from '../events/auth-events.js';
import { AuditEventRepository } from './audit-event.repository.js';
import { toAuditEvent } from './audit-row.js';
import type { AuditEvent } from './entities/audit-event.entity.js';
import { EventIdGenerator } from './event-id.js';
import { RandomSource } from '../common/random/random-source.js';

/** Rows per INSERT: one statement, so a batch is written whole or not at all. */
export const AUDIT_BATCH_SIZE = 100;
/** Events waiting beyond this are dropped (and reported), so an outage cannot exhaust memory. */
export const AUDIT_MAX_PENDING = 10_000;

/**
 * Writes every AuthEvent to `auth_events`, off the request path: the listener only queues, and
 * the queue is written in batches once the current turn of the event loop is over. A write that
 * fails is logged at error level with what was lost and why; it never reaches an API answer.
 * The application only ever inserts here (the database refuses anything else).
 */
@Injectable()
export class AuditWriter implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(AuditWriter.name);
  private queue: AuditEvent[] = [];
  private draining: Promise<void> | null = null;
  private dropped = 0;
  private readonly ids: EventIdGenerator;

  constructor(
    private readonly events: AuthEvents,
    private readonly repository: AuditEventRepository,
    random: RandomSource,
  ) {
    this.ids = new EventIdGenerator(random);
  }

  onModuleInit(): void {
    this.events.subscribe((record) => this.enqueue(record));
  }

  /**
   * Requests still in flight when shutdown began finish before this hook runs, and Nest shuts
   * global modules (TypeORM's among them) down last, so the database is still open here.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.flush();
  }

  /** Resolves once every event told so far has been written, or reported lost. Never rejects. */
  flush(): Promise<void> {
    return this.draining ?? Promise.resolve();
  }

  private enqueue(record: AuthEventRecord): void {
    if (this.queue.length >= AUDIT_MAX_PENDING) {
      this.dropped += 1;
    } else {
      this.queue.push(toAuditEvent(record, this.ids.next(record.at)));
    }
    this.draining ??= this.drain();
  }

  private async drain(): Promise<void> {
    // Everything told during this turn of the event loop goes into one batch.
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      while (this.queue.length > 0 || this.dropped > 0) {
        this.reportDropped();
        const batch = this.queue.splice(0, AUDIT_BATCH_SIZE);
        if (batch.length > 0) {
          await this.write(batch);
        }
      }
    } finally {
      this.draining = null;
    }
  }

  private async write(batch: AuditEvent[]): Promise<void> {
    try {
      await this.repository.insertBatch(batch);
    } catch (error: unknown) {
      const reason = error instanceof Error ? error.message : String(error);
      this.logger.error(
        `Audit trail: ${batch.length} event(s) lost (${summarize(batch)}): ${reason}`,
      );
    }
  }

  private reportDropped(): void {
    if (this.dropped === 0) {
      return;
    }
    this.logger.error(
      `Audit trail: ${this.dropped} event(s) lost: more than ${AUDIT_MAX_PENDING} were waiting to be written`,
    );
    this.dropped = 0;
  }
}

/** "2 login_failed, 1 lockout_started": what was lost, without any value from the events. */
function summarize(batch: readonly AuditEvent[]): string {
  const counts = new Map<string, number>();
  for (const row of batch) {
    counts.set(row.type, (counts.get(row.type) ?? 0) + 1);
  }
  return [...counts].map(([type, count]) => `${count} ${type}`).join(', ');
}
