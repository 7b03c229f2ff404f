import { Module } from '@nestjs/common';
import { AuditPurgeTimer } from './audit-purge-timer.js';
import { AuditModule } from './audit.module.js';

/**
 * The service's retention duties: the window written at start-up and the purge timer. Imported
 * by the service's application only; the admin CLI uses AuditRetentionService on demand.
 */
@Module({
  imports: [AuditModule],
  providers: [AuditPurgeTimer],
})
export class AuditRetentionModule {}
