import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { User } from '../../users/entities/user.entity.js';

/** One unspent recovery code of an account, stored only as its SHA-256 digest. Spent = deleted. */
@Entity('recovery_codes')
@Index('IDX_recovery_codes_userId_codeHash', ['userId', 'codeHash'], { unique: true })
export class RecoveryCode {
  @PrimaryColumn({ type: String, length: 36 })
  id: string;

  @Column({ type: String, length: 36 })
  userId: string;

  /** Declared for the foreign key (deleting a user deletes its codes); never loaded. */
  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'userId', foreignKeyConstraintName: 'FK_recovery_codes_userId' })
  owner?: User;

  /** Hex SHA-256 of the normalised code. */
  @Column({ type: String, length: 64 })
  codeHash: string;

  @Column({ type: Date })
  createdAt: Date;
}
