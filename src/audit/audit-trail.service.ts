import { Injectable } from '@nestjs/common';
import { AuditEventRepository, type AuditPageQuery } from './audit-event.repository.js';
import type { AuditRecordRow } from './audit-row.js';

/** An audit row as readers see it: what was stored for the event, with its details parsed. */
export type { AuditPageQuery } from './audit-event.repository.js';

export interface AuditEntry extends Omit<AuditRecordRow, 'details'> {
  readonly details: Readonly<Record<string, unknown>>;
}

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
