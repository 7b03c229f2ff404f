import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Clock } from '../../common/time/clock.js';
import { AppConfig } from '../../config/app-config.js';
import { ExpiredRows } from '../../tokens/cleanup/expired-rows.js';
import { OAuthArtefactRepository } from './oauth-artefact.repository.js';

/**
 * The provider's artefacts past their expiry are purged by the expired-token cleanup, on its
 * timer and settings (TokenCleanup__*), in batches of TokenCleanup__BatchSize rows. A used code
 * or refresh token is kept until it expires, so presenting it again still reads as a reuse; once
 * expired, the library refuses it without the row.
 */
@Injectable()
export class ArtefactCleanup implements OnModuleInit {
  constructor(
    private readonly artefacts: OAuthArtefactRepository,
    private readonly expiredRows: ExpiredRows,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.expiredRows.add({
      name: 'OAuth artefact(s)',
      purgeBatch: (now, limit) => this.artefacts.purgeExpired(now, limit),
    });
  }

  /** Deletes every artefact expired now, batch after batch; how many. */
  async purgeExpired(): Promise<number> {
    const now = this.clock.now();
    const { batchSize } = this.config.tokenCleanup;
    let total = 0;
    for (;;) {
      const deleted = await this.artefacts.purgeExpired(now, batchSize);
      total += deleted;
      if (deleted < batchSize) {
        return total;
      }
    }
  }
}
