import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One row of the append-only audit trail (table `auth_events`): an AuthEvent as it was stored.
 * Never holds a secret: no password, token value or token hash.
 */
@Entity('auth_events')
@Index('IDX_auth_events_userId_occurredAt', ['userId', 'occurredAt'])
export class AuditEvent {
  /** Time-ordered UUID made in code (see EventIdGenerator), so ties on occurredAt keep their order. */
  @PrimaryColumn({ type: String, length: 36 })
  id: string;

  @Index('IDX_auth_events_occurredAt')
  @Column({ type: Date })
  occurredAt: Date;

  /** The AuthEvent type, e.g. `login_failed`. */
  @Column({ type: String, length: 40 })
  type: string;

  /** Null when no account is known, e.g. a login with an unknown e-mail. */
  @Column({ type: String, length: 36, nullable: true })
  userId: string | null;

  /** The attempted address of a login to an unknown account, when it is a well-formed one. */
  @Column({ type: String, length: 254, nullable: true })
  email: string | null;

  @Column({ type: String, length: 64 })
  ip: string;

  @Column({ type: String, length: 256, nullable: true })
  userAgent: string | null;

  @Column({ type: String, length: 128 })
  requestId: string;

  /** JSON object with the event's other fields; `{}` when it has none. */
  // `text` exists on both engines; a String column would be a bounded varchar.
  @Column({ type: 'text' })
  details: string;
}
