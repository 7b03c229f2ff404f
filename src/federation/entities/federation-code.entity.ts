import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { User } from '../../users/entities/user.entity.js';

/**
 * The one-time code a finished sign-in hands to its front end (table `federation_codes`), keyed by
 * its SHA-256; it is exchanged once, with the verifier of the challenge the flow started with.
 */
@Entity('federation_codes')
export class FederationCode {
  @PrimaryColumn({ type: String, length: 64 })
  codeHash: string;

  @Index('IDX_federation_codes_userId')
  @Column({ type: String, length: 36 })
  userId: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'userId', foreignKeyConstraintName: 'FK_federation_codes_userId' })
  owner?: User;

  @Column({ type: String, length: 40 })
  provider: string;

  @Column({ type: String, length: 128 })
  codeChallenge: string;

  @Column({ type: Date })
  createdAt: Date;

  @Index('IDX_federation_codes_expiresAt')
  @Column({ type: Date })
  expiresAt: Date;
}
