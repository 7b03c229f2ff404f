import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { Clock } from '../../common/time/clock.js';
import { AppConfig, type TokenCleanupConfig } from '../../config/app-config.js';
import { UnitOfWork } from '../../database/unit-of-work.js';
import { RefreshTokenRepository, type CleanedBatch } from '../storage/refresh-token.repository.js';
import { ExpiredRows, type ExpiredRowsPurge } from './expired-rows.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** The shortest rest between two batches on SQLite. */
const MIN_PAUSE_MS = 5;
/**
 * On SQLite, about how long one batch may hold the write lock. A running instance whose write
 * meets the CLI's purge waits that long, and its requests with it (a SQLite connection waits
 * for the lock inside the call). On a large file a deleted row costs a random page in every
 * index of the table, so a fixed row count says little about the time; the batch (of sessions,
 * each with its tokens) is sized by the lowest time per session seen so far in this purge. A batch's time also counts its wait for the
 * lock while the instance writes, so the lowest is the closest to the work alone: a batch that
 * waited does not shrink the next.
 */
export const SQLITE_BATCH_TARGET_MS = 10;
/**
 * The first batch on SQLite, and the smallest (unless TokenCleanup__BatchSize is smaller), in
 * sessions: an expired session goes with all its tokens (five or more), so ten sessions are
 * about the 50 rows a first batch was before sessions had a table of their own (decision 0027).
 */
export const SQLITE_FIRST_BATCH = 10;

/**
 * Deletes refresh tokens whose expiry lies further back than the retention margin, and sessions
 * whose expiry does, in batches of sessions, on a timer. A revoked token is kept until then, so
 * replaying it still reads as reuse. Safe with
 * many instances: on PostgreSQL a batch skips rows another instance is already deleting. On
 * SQLite each batch is one short write and the purge rests between batches, so a running
 * instance next to the CLI's purge waits at most about one batch for the write lock.
 */
@Injectable()
export class TokenCleanupService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(TokenCleanupService.name);
  private readonly settings: TokenCleanupConfig;
  private readonly refreshLifetimeMs: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly tokens: RefreshTokenRepository,
    private readonly unitOfWork: UnitOfWork,
    private readonly clock: Clock,
    config: AppConfig,
    private readonly expiredRows: ExpiredRows,
  ) {
    this.settings = config.tokenCleanup;
    this.refreshLifetimeMs = config.jwt.refreshTokenExpiryDays * DAY_MS;
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

  /**
   * Deletes every token past its expiry plus the retention margin, and every session whose
   * expiry is that far back (with its tokens); returns how many tokens. A
   * rotated token expires as it would have had it not been rotated: a refresh lifetime after its
   * creation (Jwt__RefreshTokenExpiryDays as configured now).
   */
  async purgeExpired(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - this.settings.retentionDays * DAY_MS);
    const tokenCutoff = new Date(cutoff.getTime() - this.refreshLifetimeMs);
    const { batchSize } = this.settings;
    let limit = this.unitOfWork.isSerialized ? Math.min(batchSize, SQLITE_FIRST_BATCH) : batchSize;
    let total = 0;
    let fastestMsPerRow = Number.POSITIVE_INFINITY;
    for (;;) {
      const started = this.clock.now().getTime();
      const batch = await this.deleteBatch(cutoff, tokenCutoff, limit);
      const { examined } = batch;
      total += batch.tokensDeleted;
      if (examined < limit) {
        break;
      }
      if (this.unitOfWork.isSerialized) {
        // SQLite has one write lock per file and no queue for it: a process waiting for it (a
        // running instance, while the CLI purges) polls, up to every 100 ms. Resting as long
        // as the batch held the lock gives it its turn; each batch is its own short write. A
        // batch's time also holds its own wait for the lock, which must not lengthen the rest
        // (next to a busy instance the purge would crawl): the hold is the rows at the fastest
        // pace seen.
        const took = this.clock.now().getTime() - started;
        // A batch counts sessions, each with its tokens: the pace is per session examined, so
        // that the next batch fits the target whatever a session holds.
        fastestMsPerRow = Math.min(fastestMsPerRow, took / examined);
        await this.clock.wait(Math.max(examined * fastestMsPerRow, MIN_PAUSE_MS));
        limit = nextSqliteBatch(fastestMsPerRow, batchSize);
      }
    }
    if (total > 0) {
      this.logger.log(`Deleted ${total} expired refresh token(s)`);
    }
    for (const purge of this.expiredRows.all) {
      await this.purgeRows(purge);
    }
    return total;
  }

  /**
   * Another capability's expired rows (ExpiredRows), TokenCleanup__BatchSize at a time until a
   * batch comes back short; on SQLite with a rest between batches, as for the tokens. Expired
   * means expired now: these rows are refused once expired, and kept for no replay check.
   */
  private async purgeRows(purge: ExpiredRowsPurge): Promise<void> {
    const limit = this.unitOfWork.isSerialized
      ? Math.min(this.settings.batchSize, SQLITE_FIRST_BATCH * 10)
      : this.settings.batchSize;
    let total = 0;
    for (;;) {
      const deleted = await purge.purgeBatch(this.clock.now(), limit);
      total += deleted;
      if (deleted < limit) {
        break;
      }
      if (this.unitOfWork.isSerialized) {
        await this.clock.wait(MIN_PAUSE_MS);
      }
    }
    if (total > 0) {
      this.logger.log(`Deleted ${total} expired ${purge.name}`);
    }
  }

  private deleteBatch(cutoff: Date, tokenCutoff: Date, limit: number): Promise<CleanedBatch> {
    return this.tokens.cleanBatch(cutoff, tokenCutoff, limit);
  }
}

/**
 * The next SQLite batch: as many rows as fit in SQLITE_BATCH_TARGET_MS at `msPerRow`; never
 * above `batchSize` (TokenCleanup__BatchSize), never below SQLITE_FIRST_BATCH unless `batchSize`
 * is.
 */
export function nextSqliteBatch(msPerRow: number, batchSize: number): number {
  const fitting = Math.floor(SQLITE_BATCH_TARGET_MS / msPerRow);
  return Math.min(batchSize, Math.max(fitting, SQLITE_FIRST_BATCH));
}
