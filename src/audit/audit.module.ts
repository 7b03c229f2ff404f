import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditEventRepository } from './audit-event.repository.js';
import { AuditRetentionRepository } from './audit-retention.repository.js';
import { AuditRetentionService } from './audit-retention.service.js';
import { AuditTrail } from './audit-trail.service.js';
import { AuditWriter } from './audit-writer.js';
import { AuditEvent } from './entities/audit-event.entity.js';

/**
 * The audit trail: every AuthEvent, stored in `auth_events`. Not global on purpose: Nest shuts
 * non-global modules down first, so AuditWriter flushes before the database closes.
 */
@Module({
  imports: [TypeOrmModule.forFeature([AuditEvent])],
  providers: [
    AuditWriter,
    AuditTrail,
    AuditEventRepository,
    AuditRetentionRepository,
    AuditRetentionService,
  ],
  exports: [AuditWriter, AuditTrail, AuditRetentionService],
})
export class AuditModule {}
