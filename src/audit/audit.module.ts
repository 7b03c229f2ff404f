import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditEventRepository } from './audit-event.repository.js';
import { AuditRetentionRepository } from './audit-retention.repository.js';
import { AuditRetentionService } from './audit-retention.service.js';
import { AuditTrail } from './audit-trail.service.js';
import { AuditEvent } from './entities/audit-event.entity.js';
import { UserAgent } from './entities/user-agent.entity.js';
import { UserAgentRepository } from './user-agent.repository.js';
import { AuditSink } from '../events/audit-sink.js';

/**
 * The audit trail: every AuthEvent, stored in `auth_events` by AuthEvents in the transaction of
 * the change it records (decision 0023). Global, as AuthEvents (global too) writes through its
 * repository, as the AuditSink.
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([AuditEvent, UserAgent])],
  providers: [
    AuditTrail,
    AuditEventRepository,
    UserAgentRepository,
    { provide: AuditSink, useExisting: AuditEventRepository },
    AuditRetentionRepository,
    AuditRetentionService,
  ],
  exports: [AuditEventRepository, AuditSink, AuditTrail, AuditRetentionService],
})
export class AuditModule {}
