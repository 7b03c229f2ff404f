import { Injectable } from '@nestjs/common';
import { AuditEventRepository, type AuditPageQuery } from './audit-event.repository.js';
import type { AuditEntry } from './audit-row.js';

export type { AuditPageQuery } from './audit-event.repository.js';
export type { AuditEntry } from './audit-row.js';

/** Reads the audit trail. Rows are written by AuthEvents, in the transaction of their change. */
@Injectable()
export class AuditTrail {
  constructor(private readonly repository: AuditEventRepository) {}

  /** Events matching `query`, newest first; see AuditEventRepository.page. */
  page(query: AuditPageQuery): Promise<AuditEntry[]> {
    return this.repository.page(query);
  }

  /** The newest `limit` events of one user, newest first (IDX_auth_events_userId). */
  latestForUser(userId: string, limit: number): Promise<AuditEntry[]> {
    return this.repository.latestForUser(userId, limit);
  }
}
