import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { Clock } from '../common/time/clock.js';
import { AppConfig, type TokenCleanupConfig } from '../config/app-config.js';
import { RefreshTokenRepository } from './refresh-token.repository.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Deletes refresh tokens whose expiry lies further back than the retention margin, in batches,
 * on a timer. A revoked token is kept until then, so replaying it still reads as reuse. Safe with
 * many instances: on PostgreSQL a batch skips rows another instance is already deleting.
 */
@Injectable()
export class TokenCleanupService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(TokenCleanupService.name);
  private readonly settings: TokenCleanupConfig;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly tokens: RefreshTokenRepository,
    private readonly clock: Clock,
    config: AppConfig,
  ) {
    this.settings = config.tokenCleanup;
  }

  onApplicationBootstrap(): void {
    if (!this.settings.enabled) {
      return;
    }
    this.timer = setInterval(() => {
      this.running = this.purgeExpired().catch((error: unknown) => {
        this.logger.error(
          'Expired-token cleanup failed',
          error instanceof Error ? error.stack : String(error),
        );
      });
    }, this.settings.intervalSeconds * 1000);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** Deletes every token past its expiry plus the retention margin; returns how many. */
  async purgeExpired(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - this.settings.retentionDays * DAY_MS);
    let total = 0;
    for (;;) {
      const deleted = await this.deleteBatch(cutoff);
      total += deleted;
      if (deleted < this.settings.batchSize) {
        break;
      }
    }
    if (total > 0) {
      this.logger.log(`Deleted ${total} expired refresh token(s)`);
    }
    return total;
  }

  private deleteBatch(cutoff: Date): Promise<number> {
    return this.tokens.deleteExpiredBatch(cutoff, this.settings.batchSize);
  }
}
