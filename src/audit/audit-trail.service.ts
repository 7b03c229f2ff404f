import { Injectable } from '@nestjs/common';
import { AuditEventRepository } from './audit-event.repository.js';

/** An audit row as readers see it, with its details parsed. */
export interface AuditEntry {
  readonly id: string;
  readonly occurredAt: Date;
  readonly type: string;
  readonly userId: string | null;
  readonly email: string | null;
  readonly ip: string;
  readonly userAgent: string | null;
  readonly requestId: string;
  readonly details: Readonly<Record<string, unknown>>;
}

/** Reads the audit trail. Rows are written by AuthEvents, in the transaction of their change. */
@Injectable()
export class AuditTrail {
  constructor(private readonly repository: AuditEventRepository) {}

  /** The newest `limit` events of one user, newest first (IDX_auth_events_userId). */
  latestForUser(userId: string, limit: number): Promise<AuditEntry[]> {
    return this.repository.latestForUser(userId, limit);
  }
}
