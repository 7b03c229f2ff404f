import { ApiProperty } from '@nestjs/swagger';
import type { AuditEntry } from '../../../audit/audit-trail.service.js';

/** One event of the audit trail. */
export class AuditEventResponseDto {
  /** UUIDv7: ordered as the events were told. */
  @ApiProperty({ format: 'uuid' })
  readonly id: string;

  @ApiProperty({ format: 'date-time' })
  readonly occurredAt: string;

  /** e.g. `login_failed`, `admin_user_deactivated`. */
  readonly type: string;

  @ApiProperty({ type: String, nullable: true })
  readonly userId: string | null;

  /** The attempted address of a failed login to an unknown account; null otherwise. */
  @ApiProperty({ type: String, nullable: true })
  readonly email: string | null;

  readonly ip: string;

  @ApiProperty({ type: String, nullable: true })
  readonly userAgent: string | null;

  readonly requestId: string;

  /** The event's other fields; admin changes name the key (`adminKeyName`) and the `reason`. */
  @ApiProperty({ type: 'object', additionalProperties: true })
  readonly details: Record<string, unknown>;

  static from(entry: AuditEntry): AuditEventResponseDto {
    return {
      id: entry.id,
      occurredAt: entry.occurredAt.toISOString(),
      type: entry.type,
      userId: entry.userId,
      email: entry.email,
      ip: entry.ip,
      userAgent: entry.userAgent,
      requestId: entry.requestId,
      details: { ...entry.details },
    };
  }
}

/** A page of the audit trail, newest first. */
export class AuditPageResponseDto {
  @ApiProperty({ type: [AuditEventResponseDto] })
  readonly events: AuditEventResponseDto[];

  /** Pass as `cursor` for the next (older) page; null on the last page. */
  @ApiProperty({ type: String, nullable: true })
  readonly nextCursor: string | null;
}
