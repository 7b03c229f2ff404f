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

  /** The newest `limit` events of one user, newest first (IDX_auth_events_userId_occurredAt). */
  async latestForUser(userId: string, limit: number): Promise<AuditEntry[]> {
    const rows = await this.repository.latestForUser(userId, limit);
    return rows.map((row) => ({ ...row, details: parseDetails(row.details) }));
  }
}

function parseDetails(text: string): Record<string, unknown> {
  const parsed: unknown = JSON.parse(text);
  return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
}
