import { Column, Entity, PrimaryColumn } from 'typeorm';

export const USERNAME_MAX_LENGTH = 100;
export const EMAIL_MAX_LENGTH = 254;

@Entity('users')
export class User {
  /** UUID generated in code, never by the database. */
  @PrimaryColumn({ type: String, length: 36 })
  id: string;

  @Column({ type: String, length: USERNAME_MAX_LENGTH })
  username: string;

  /** Stored trimmed and in lower case; unique. */
  @Column({ type: String, length: EMAIL_MAX_LENGTH, unique: true })
  email: string;

  /** Self-describing PBKDF2 hash; see PasswordHasher. Never leaves the service. */
  @Column({ type: String, length: 255 })
  passwordHash: string;

  @Column({ type: Number, default: 0 })
  failedLoginAttempts: number;

  @Column({ type: Date, nullable: true })
  lockoutEnd: Date | null;

  @Column({ type: Boolean, default: true })
  isActive: boolean;

  @Column({ type: Date })
  createdAt: Date;

  @Column({ type: Date, nullable: true })
  lastLoginAt: Date | null;
}
