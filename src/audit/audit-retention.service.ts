import { Injectable, Logger } from '@nestjs/common';
import { setTimeout as pause } from 'node:timers/promises';
import { Clock } from '../common/time/clock.js';
import { AppConfig, type AuditRetentionConfig } from '../config/app-config.js';
import { AuditRetentionRepository, type AuditCursor } from './audit-retention.repository.js';
import { toAuditEntries } from './audit-row.js';
import type { AuditEntry } from './audit-trail.service.js';
import { UserAgentRepository } from './user-agent.repository.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Rows read per statement of an export: small enough for memory, large enough for speed. */
export const AUDIT_EXPORT_PAGE_SIZE = 500;

/** What one purge did. */
export interface AuditPurgeResult {
  /** Rows older than this were removed: now minus the retention window. */
  readonly cutoff: Date;
  readonly retentionDays: number;
  readonly deletedCount: number;
}

/**
 * Keeps the audit trail bounded: rows older than Audit__RetentionDays may go, younger ones never
 * (the database refuses it too), and any range can be exported first. Nothing here updates a row.
 */
@Injectable()
export class AuditRetentionService {
  private readonly logger = new Logger(AuditRetentionService.name);
  private readonly settings: AuditRetentionConfig;

  constructor(
    private readonly repository: AuditRetentionRepository,
    private readonly clock: Clock,
    config: AppConfig,
    private readonly userAgents: UserAgentRepository,
  ) {
    this.settings = config.auditRetention;
  }

  /** Tells the database the configured window, which its DELETE trigger enforces. */
  async applyWindow(): Promise<void> {
    await this.repository.setRetentionDays(this.settings.retentionDays);
  }

  /**
   * Applies the configured window, then deletes every row older than it, in batches of
   * Audit__PurgeBatchSize: each batch is one short statement, and Audit__PurgePauseMs passes
   * between two, so requests' writes are never held up for long. The cutoff is fixed when the
   * purge starts: rows that age out meanwhile wait for the next run.
   */
  async purge(): Promise<AuditPurgeResult> {
    const { retentionDays, purgeBatchSize, purgePauseMs } = this.settings;
    await this.applyWindow();
    const cutoff = new Date(this.clock.now().getTime() - retentionDays * DAY_MS);
    let deletedCount = 0;
    for (;;) {
      const deleted = await this.repository.deleteOlderThan(cutoff, purgeBatchSize);
      deletedCount += deleted;
      if (deleted < purgeBatchSize) {
        break;
      }
      if (purgePauseMs > 0) {
        await pause(purgePauseMs);
      }
    }
    if (deletedCount > 0) {
      this.logger.log(
        `Audit trail: deleted ${deletedCount} event(s) older than ${cutoff.toISOString()}`,
      );
    }
    return { cutoff, retentionDays, deletedCount };
  }

  /**
   * Every row older than `before`, oldest first (ties in the order they were told), read a page
   * at a time so that the table is never held in memory whole.
   */
  async *entriesBefore(before: Date): AsyncGenerator<AuditEntry> {
    let after: AuditCursor | null = null;
    for (;;) {
      const page = await this.repository.pageBefore(before, after, AUDIT_EXPORT_PAGE_SIZE);
      for (const entry of await toAuditEntries(page, this.userAgents)) {
        yield entry;
      }
      if (page.length < AUDIT_EXPORT_PAGE_SIZE) {
        return;
      }
      const last = page[page.length - 1];
      after = { id: last.id };
    }
  }
}
