import { Column, Entity, Index } from 'typeorm';
import { BinaryPrimaryColumn } from '../../database/column-types.js';

/**
 * One row of the append-only audit trail (table `auth_events`): an AuthEvent as it was stored.
 * Never holds a secret: no password, token value or token hash.
 *
 * Lean layout (decision 0028): the id is the UUIDv7 as its 16 bytes and the table is keyed by it
 * (WITHOUT ROWID on SQLite), so it is also the time index: when the event happened is the id's
 * first 48 bits (eventIdTime), read by the retention purge, its trigger and the export. The user
 * agent is a reference to its one row in `user_agents`. Readers see AuditEntry, as before.
 */
@Entity('auth_events', { withoutRowid: true })
@Index('IDX_auth_events_userId', ['userId'])
export class AuditEvent {
  /** UUIDv7 bytes made in code (see EventIdGenerator): they sort in the order events were told. */
  @BinaryPrimaryColumn()
  id: Buffer;

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

  /** The `user_agents` row of the request's user agent; null when it sent none. */
  @Column({ type: 'integer', nullable: true })
  userAgentId: number | null;

  @Column({ type: String, length: 128 })
  requestId: string;

  /** JSON object with the event's other fields; `{}` when it has none. */
  // `text` exists on both engines; a String column would be a bounded varchar.
  @Column({ type: 'text' })
  details: string;
}
