import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { User } from '../../users/entities/user.entity.js';

/** Room for any address a request may name (RFC 5321's 64 + 1 + 255), normalised or not. */
export const RECIPIENT_MAX_LENGTH = 320;

/** The mails the service sends; each has its templates (docs/operations/mail.md). */
export const MAIL_KINDS = [
  'password_reset',
  'email_verification',
  'email_change',
  'email_changed',
  'email_code',
] as const;
export type MailKind = (typeof MAIL_KINDS)[number];

/**
 * `requested`: asked for, not yet prepared (a password reset: whether an account has the address
 * is decided by the sender, off the request path). `pending`: ready to send, maybe after failed
 * attempts. `sent` and `failed` are final; such rows are deleted after Mail__RetentionDays.
 */
export type MailState = 'requested' | 'pending' | 'sent' | 'failed';

/** One mail of the outbox (table `mail_outbox`). */
@Entity('mail_outbox')
@Index('IDX_mail_outbox_state_nextAttemptAt', ['state', 'nextAttemptAt'])
export class OutboxMail {
  /** Also the Message-ID's left part, so every attempt sends the same Message-ID. */
  @PrimaryColumn({ type: String, length: 36 })
  id: string;

  @Column({ type: String, length: 40 })
  kind: MailKind;

  @Column({ type: String, length: 16 })
  state: MailState;

  /** Null only for a requested password reset, whose account is not known yet. */
  @Index('IDX_mail_outbox_userId')
  @Column({ type: String, length: 36, nullable: true })
  userId: string | null;

  /** Declared for the foreign key (deleting a user deletes its mails); never loaded. */
  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'userId', foreignKeyConstraintName: 'FK_mail_outbox_userId' })
  owner?: User;

  @Column({ type: String, length: RECIPIENT_MAX_LENGTH })
  recipient: string;

  /** JSON object of the template's values (never a secret). */
  @Column({ type: 'text' })
  params: string;

  /** The token the link carries, encrypted (see OutboxSecrets); cleared once final. */
  @Column({ type: String, length: 255, nullable: true })
  secret: string | null;

  @Column({ type: Date })
  createdAt: Date;

  // Written as the migration wrote it, so entities and schema match (test/schema.e2e-spec.ts).
  @Column({ type: Number, default: 0 })
  attempts: number;

  @Column({ type: Date })
  nextAttemptAt: Date;

  /** The claim of the sender that is delivering it, and until when that claim holds. */
  @Column({ type: String, length: 36, nullable: true })
  claimedBy: string | null;

  @Column({ type: Date, nullable: true })
  claimedUntil: Date | null;

  @Column({ type: Date, nullable: true })
  finishedAt: Date | null;

  /** The last failure: an error code and an SMTP status, never server text (it echoes addresses). */
  @Column({ type: String, length: 100, nullable: true })
  lastError: string | null;
}
