import { Column, Entity, PrimaryColumn, Unique } from 'typeorm';

export const USERNAME_MAX_LENGTH = 100;
export const EMAIL_MAX_LENGTH = 254;

@Entity('users')
@Unique('UQ_users_email', ['email'])
export class User {
  /** UUID generated in code, never by the database. */
  @PrimaryColumn({ type: String, length: 36 })
  id: string;

  @Column({ type: String, length: USERNAME_MAX_LENGTH })
  username: string;

  /** Stored trimmed and in lower case; unique. */
  @Column({ type: String, length: EMAIL_MAX_LENGTH })
  email: string;

  /** Self-describing PBKDF2 hash; see PasswordHasher. Never leaves the service. */
  @Column({ type: String, length: 255 })
  passwordHash: string;

  @Column({ type: Number, default: 0 })
  failedLoginAttempts: number;

  @Column({ type: Date, nullable: true })
  lockoutEnd: Date | null;

  // Written as the migration wrote it, so entities and schema match (test/schema.e2e-spec.ts).
  @Column({ type: Boolean, default: () => 'true' })
  isActive: boolean;

  @Column({ type: Date })
  createdAt: Date;

  @Column({ type: Date, nullable: true })
  lastLoginAt: Date | null;

  /** When the current address was proven by a link mailed to it; null: never. */
  @Column({ type: Date, nullable: true })
  emailVerifiedAt: Date | null;
}
