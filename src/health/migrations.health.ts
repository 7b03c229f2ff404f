import { Injectable, Logger } from '@nestjs/common';
import { HealthIndicatorService, type HealthCheckAttempt } from '@nestjs/terminus';
import { DataSource, MigrationExecutor } from 'typeorm';
import { UnitOfWork } from '../database/unit-of-work.js';
import { READINESS_TIMEOUT_MS } from './readiness-timeout.js';

export const MIGRATIONS_UNREADABLE = 'The migrations table could not be read.';

/** Readiness: the database has every migration this build knows. */
@Injectable()
export class MigrationsHealthIndicator {
  private readonly logger = new Logger(MigrationsHealthIndicator.name);

  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly unitOfWork: UnitOfWork,
    private readonly dataSource: DataSource,
  ) {}

  /**
   * Compares the migrations table with the build's migrations. The lookup TypeORM's
   * `showMigrations()` makes, minus its side effect: it never creates the migrations table, so a
   * probe only reads. Through UnitOfWork, like every access to the shared SQLite connection.
   */
  areApplied(): HealthCheckAttempt<'migrations'> {
    return this.indicators
      .check('migrations')
      .attempt(async () => {
        let pending: number;
        try {
          const executor = new MigrationExecutor(this.dataSource);
          pending = (await this.unitOfWork.run(() => executor.getPendingMigrations())).length;
        } catch (error: unknown) {
          const reason = error instanceof Error ? error.message : String(error);
          this.logger.warn(`Readiness: the migrations could not be read: ${reason}`);
          throw new Error(MIGRATIONS_UNREADABLE);
        }
        if (pending > 0) {
          this.logger.warn(`Readiness: ${pending} migration(s) pending`);
          throw new Error(`${pending} migration(s) pending.`);
        }
      })
      .withTimeout(READINESS_TIMEOUT_MS);
  }
}
