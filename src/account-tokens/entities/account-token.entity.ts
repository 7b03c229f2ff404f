import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { EMAIL_MAX_LENGTH, User } from '../../users/entities/user.entity.js';

/** What a mailed link lets its holder do. */
export const ACCOUNT_TOKEN_PURPOSES = [
  'password_reset',
  'email_verification',
  'email_change',
] as const;
export type AccountTokenPurpose = (typeof ACCOUNT_TOKEN_PURPOSES)[number];

/**
 * A single-use token carried by a mailed link. Only its SHA-256 digest is stored, as for refresh
 * tokens. An account has at most one per purpose: a new one replaces it.
 */
@Entity('account_tokens')
@Index('IDX_account_tokens_userId_purpose', ['userId', 'purpose'], { unique: true })
export class AccountToken {
  @PrimaryColumn({ type: String, length: 36 })
  id: string;

  @Column({ type: String, length: 36 })
  userId: string;

  /** Declared for the foreign key (deleting a user deletes its tokens); never loaded. */
  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'userId', foreignKeyConstraintName: 'FK_account_tokens_userId' })
  owner?: User;

  @Column({ type: String, length: 20 })
  purpose: AccountTokenPurpose;

  /** Hex SHA-256 of the raw token. */
  @Index('IDX_account_tokens_tokenHash', { unique: true })
  @Column({ type: String, length: 64 })
  tokenHash: string;

  /**
   * The address the link was sent to: the account's address then (reset, verification), or the
   * address it asks to change to. A token whose address no longer fits the account is dead.
   */
  @Column({ type: String, length: EMAIL_MAX_LENGTH })
  email: string;

  @Column({ type: Date })
  createdAt: Date;

  @Column({ type: Date })
  expiresAt: Date;
}
