import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, type HealthCheckResult } from '@nestjs/terminus';
import { Public } from '../common/decorators/public.decorator.js';
import { DatabaseHealthIndicator } from './database.health.js';
import { MigrationsHealthIndicator } from './migrations.health.js';

/** Outside the `api` prefix: probes address the service, not its API. */
export const HEALTH_PATHS = ['health/live', 'health/ready'];

const UP = {
  database: { status: 'up', responseTime: 1 },
  migrations: { status: 'up', responseTime: 4 },
};
const READY_EXAMPLE = { status: 'ok', info: UP, error: {}, details: UP };

/**
 * Probes for orchestrators and load balancers: open, uncached, and answered with terminus's own
 * body (`status`, `info`, `error`, `details`), 200 when healthy and 503 when not (the 503 body is
 * written by AllExceptionsFilter).
 */
@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: DatabaseHealthIndicator,
    private readonly migrations: MigrationsHealthIndicator,
  ) {}

  /** The process answers. Nothing else is checked, so a database outage never restarts it. */
  @Get('live')
  @HealthCheck()
  @ApiOkResponse({
    examples: {
      alive: {
        summary: 'The process answers',
        value: { status: 'ok', info: {}, error: {}, details: {} },
      },
    },
  })
  checkLiveness(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  /** Worth sending requests to: the database answers and its schema is this build's. */
  @Get('ready')
  @HealthCheck()
  @ApiOkResponse({ examples: { ready: { summary: 'Ready for requests', value: READY_EXAMPLE } } })
  checkReadiness(): Promise<HealthCheckResult> {
    return this.health.check([this.database.isReachable(), this.migrations.areApplied()]);
  }
}
