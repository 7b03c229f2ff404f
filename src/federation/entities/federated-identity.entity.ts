import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { EMAIL_MAX_LENGTH, User } from '../../users/entities/user.entity.js';

/**
 * An identity at another provider linked to an account (table `federated_identities`). It is the
 * pair (issuer, subject) and nothing else: the address is only what the provider last said.
 */
@Entity('federated_identities')
@Index('IDX_federated_identities_issuer_subject', ['issuer', 'subject'], { unique: true })
export class FederatedIdentity {
  @PrimaryColumn({ type: String, length: 36 })
  id: string;

  @Index('IDX_federated_identities_userId')
  @Column({ type: String, length: 36 })
  userId: string;

  /** Declared for the foreign key (deleting a user deletes its identities); never loaded. */
  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'userId', foreignKeyConstraintName: 'FK_federated_identities_userId' })
  owner?: User;

  /** The provider's id in Federation__Providers when it was linked. */
  @Column({ type: String, length: 40 })
  provider: string;

  @Column({ type: String, length: 512 })
  issuer: string;

  @Column({ type: String, length: 255 })
  subject: string;

  /** The address the provider last gave, verified or not; shown, never matched on. */
  @Column({ type: String, length: EMAIL_MAX_LENGTH, nullable: true })
  email: string | null;

  @Column({ type: Date })
  linkedAt: Date;

  @Column({ type: Date, nullable: true })
  lastUsedAt: Date | null;
}
