import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { DatabaseHealthIndicator } from './database.health.js';
import { HealthController } from './health.controller.js';
import { MigrationsHealthIndicator } from './migrations.health.js';

@Module({
  // Terminus would log every failed probe at error level; the indicators log the cause as a
  // warning instead (errors are for unhandled failures only).
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [DatabaseHealthIndicator, MigrationsHealthIndicator],
})
export class HealthModule {}
