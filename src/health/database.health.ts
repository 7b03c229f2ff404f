import { Injectable, Logger } from '@nestjs/common';
import { HealthIndicatorService, type HealthCheckAttempt } from '@nestjs/terminus';
import { UnitOfWork } from '../database/unit-of-work.js';
import { READINESS_TIMEOUT_MS } from './readiness-timeout.js';

/** The only text a failed round trip shows: driver messages stay in the log. */
export const DATABASE_UNREACHABLE = 'The database did not answer.';

/** Readiness: one round trip to the database. */
@Injectable()
export class DatabaseHealthIndicator {
  private readonly logger = new Logger(DatabaseHealthIndicator.name);

  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly unitOfWork: UnitOfWork,
  ) {}

  /**
   * `SELECT 1` through UnitOfWork: on SQLite it waits its turn on the shared connection instead
   * of running inside another request's transaction.
   */
  isReachable(): HealthCheckAttempt<'database'> {
    return this.indicators
      .check('database')
      .attempt(async () => {
        try {
          await this.unitOfWork.run((m) => m.query('SELECT 1'));
        } catch (error: unknown) {
          this.logger.warn(`Readiness: the database round trip failed: ${describe(error)}`);
          throw new Error(DATABASE_UNREACHABLE);
        }
      })
      .withTimeout(READINESS_TIMEOUT_MS);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
