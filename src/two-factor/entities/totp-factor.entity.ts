import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { User } from '../../users/entities/user.entity.js';

/**
 * An account's TOTP second factor: pending from enrolment until a code confirms it, then active.
 * One per account. The secret is stored only encrypted (see TotpSecrets).
 */
@Entity('totp_factors')
export class TotpFactor {
  @PrimaryColumn({ type: String, length: 36 })
  userId: string;

  /** Declared for the foreign key (deleting a user deletes its factor); never loaded. */
  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'userId', foreignKeyConstraintName: 'FK_totp_factors_userId' })
  owner?: User;

  /** `v1.<key id>.<iv>.<tag>.<ciphertext>`, AES-256-GCM; never the base32 secret itself. */
  @Column({ type: String, length: 255 })
  sealedSecret: string;

  @Column({ type: Date })
  createdAt: Date;

  /** When a code confirmed the enrolment; null while it is pending (not yet a factor). */
  @Column({ type: Date, nullable: true })
  confirmedAt: Date | null;

  /**
   * The newest 30-second step whose code was accepted. A code is accepted only for a later step,
   * by a conditional update, so each code works once across every instance.
   */
  @Column({ type: Number, nullable: true })
  lastUsedStep: number | null;
}
