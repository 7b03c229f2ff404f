import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { RandomSource } from '../common/random/random-source.js';
import { internalOrigin } from '../common/request-origin/request-origin.js';
import { AppConfig, type AuditRetentionConfig } from '../config/app-config.js';
import { AuthEvents } from '../events/auth-events.js';
import { AuditRetentionService } from './audit-retention.service.js';

/** The audit rows of the timer's purges carry this as their IP. */
export const AUDIT_PURGE_ORIGIN = 'audit-purge';

/**
 * The service's side of retention: at start-up it tells the database the configured window (so
 * the DELETE trigger refuses what the configuration keeps), and with Audit__PurgeEnabled it runs
 * the purge every Audit__PurgeIntervalSeconds, one run at a time. The admin CLI has neither: its
 * `audit:purge` applies the window itself.
 */
@Injectable()
export class AuditPurgeTimer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(AuditPurgeTimer.name);
  private readonly settings: AuditRetentionConfig;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;

  constructor(
    private readonly retention: AuditRetentionService,
    private readonly events: AuthEvents,
    private readonly random: RandomSource,
    config: AppConfig,
  ) {
    this.settings = config.auditRetention;
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.retention.applyWindow();
    if (!this.settings.purgeEnabled) {
      return;
    }
    this.timer = setInterval(() => {
      // A purge that outlasts the interval is not doubled: this tick is skipped.
      this.running ??= this.purgeOnce().finally(() => {
        this.running = null;
      });
    }, this.settings.purgeIntervalSeconds * 1000);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  private async purgeOnce(): Promise<void> {
    try {
      const { cutoff, retentionDays, deletedCount } = await this.retention.purge();
      if (deletedCount > 0) {
        // The purge commits batch by batch; its summary is an event of its own, after the last.
        await this.events.recordAlone(
          { type: 'audit_purged', userId: null, cutoff, retentionDays, deletedCount },
          internalOrigin(AUDIT_PURGE_ORIGIN, this.random),
        );
      }
    } catch (error: unknown) {
      this.logger.error('Audit purge failed', error instanceof Error ? error.stack : String(error));
    }
  }
}
