import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { Clock } from '../../common/time/clock.js';
import { AppConfig, type TokenCleanupConfig } from '../../config/app-config.js';
import { OAuthArtefactRepository } from './oauth-artefact.repository.js';

/**
 * Deletes the provider's artefacts past their expiry, on the expired-token cleanup's timer and
 * settings (TokenCleanup__*), in batches of TokenCleanup__BatchSize rows. A used code or refresh
 * token is kept until it expires, so presenting it again still reads as a reuse; once expired,
 * the library refuses it without the row.
 */
@Injectable()
export class ArtefactCleanup implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ArtefactCleanup.name);
  private readonly settings: TokenCleanupConfig;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly artefacts: OAuthArtefactRepository,
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
          'Expired OAuth artefact cleanup failed',
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

  /** Deletes every artefact expired now; how many. */
  async purgeExpired(): Promise<number> {
    const now = this.clock.now();
    let total = 0;
    for (;;) {
      const deleted = await this.artefacts.purgeExpired(now, this.settings.batchSize);
      total += deleted;
      if (deleted < this.settings.batchSize) {
        break;
      }
    }
    if (total > 0) {
      this.logger.log(`Deleted ${total} expired OAuth artefacts`);
    }
    return total;
  }
}
