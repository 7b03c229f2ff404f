import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { EMAIL_MAX_LENGTH, User } from '../../users/entities/user.entity.js';

/**
 * The live sign-in code of an account (table `email_codes`): at most one, a new one replaces it.
 * The code is stored only as a keyed digest and the link's token only as a SHA-256 digest; the
 * row goes when either is used, when the code's tries run out, or with the account.
 */
@Entity('email_codes')
export class EmailCode {
  @PrimaryColumn({ type: String, length: 36 })
  id: string;

  @Index('IDX_email_codes_userId', { unique: true })
  @Column({ type: String, length: 36 })
  userId: string;

  /** Declared for the foreign key (deleting a user deletes its code); never loaded. */
  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'userId', foreignKeyConstraintName: 'FK_email_codes_userId' })
  owner?: User;

  /** The address it was mailed to: the account's then. Once the account's changes, it is dead. */
  @Column({ type: String, length: EMAIL_MAX_LENGTH })
  email: string;

  /** Hex HMAC-SHA256 of the code under a key the database does not hold (EmailCodeSecrets). */
  @Column({ type: String, length: 64 })
  codeHash: string;

  /** Hex SHA-256 of the link's token. */
  @Index('IDX_email_codes_tokenHash', { unique: true })
  @Column({ type: String, length: 64 })
  tokenHash: string;

  /** Wrong codes tried so far. */
  // Written as the migration wrote it, so entities and schema match (test/schema.e2e-spec.ts).
  @Column({ type: Number, default: 0 })
  attempts: number;

  @Column({ type: Date })
  createdAt: Date;

  @Column({ type: Date })
  expiresAt: Date;
}
