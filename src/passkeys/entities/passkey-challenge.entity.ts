import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { User } from '../../users/entities/user.entity.js';

/** What a challenge was made for: a new passkey, or an assertion (sign-in, second factor, proof). */
export type PasskeyCeremony = 'registration' | 'authentication';

/**
 * A challenge handed out by an options route and not yet used: valid once, until `expiresAt`, for
 * its ceremony and, when the account is known (registration), that account only. Stored as a
 * digest, so the table cannot be read back into usable challenges.
 */
@Entity('passkey_challenges')
@Index('IDX_passkey_challenges_userId', ['userId'])
@Index('IDX_passkey_challenges_expiresAt', ['expiresAt'])
export class PasskeyChallenge {
  /** Hex SHA-256 of the challenge as the browser echoes it (base64url). */
  @PrimaryColumn({ type: String, length: 64 })
  challengeHash: string;

  @Column({ type: String, length: 16 })
  ceremony: PasskeyCeremony;

  /** The account a registration is for; null for an assertion, whose account is not known yet. */
  @Column({ type: String, length: 36, nullable: true })
  userId: string | null;

  /** Declared for the foreign key (deleting a user deletes its challenges); never loaded. */
  @ManyToOne(() => User, { onDelete: 'CASCADE', nullable: true })
  @JoinColumn({ name: 'userId', foreignKeyConstraintName: 'FK_passkey_challenges_userId' })
  owner?: User;

  @Column({ type: Date })
  expiresAt: Date;
}
