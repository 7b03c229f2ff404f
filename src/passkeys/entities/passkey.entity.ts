import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { User } from '../../users/entities/user.entity.js';

/** The longest name a person may give a passkey, in characters. */
export const PASSKEY_NAME_MAX_LENGTH = 64;
/** The name of a passkey registered without one. */
export const DEFAULT_PASSKEY_NAME = 'Llave de acceso';

/**
 * One WebAuthn credential of an account: what verifying its assertions needs, and what its owner
 * sees. No private key exists here; the public key cannot sign.
 */
@Entity('passkeys')
@Index('IDX_passkeys_credentialId', ['credentialId'], { unique: true })
@Index('IDX_passkeys_userId', ['userId'])
export class Passkey {
  /** UUID generated in code; what the routes call the passkey. */
  @PrimaryColumn({ type: String, length: 36 })
  id: string;

  @Column({ type: String, length: 36 })
  userId: string;

  /** Declared for the foreign key (deleting a user deletes its passkeys); never loaded. */
  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'userId', foreignKeyConstraintName: 'FK_passkeys_userId' })
  owner?: User;

  /** The credential id the authenticator chose, base64url, as assertions name it. */
  @Column({ type: String, length: 1400 })
  credentialId: string;

  /** The COSE public key, base64url. */
  @Column({ type: String, length: 1024 })
  publicKey: string;

  /** The newest signature counter accepted; 0 for authenticators that keep none. */
  @Column({ type: Number })
  counter: number;

  /** How the browser can reach the authenticator (`internal,hybrid`); null when it said nothing. */
  @Column({ type: String, length: 128, nullable: true })
  transports: string | null;

  /** The credential may be synced to other devices (a multi-device passkey). */
  @Column({ type: Boolean })
  isBackupEligible: boolean;

  /** It was backed up when last used. */
  @Column({ type: Boolean })
  isBackedUp: boolean;

  @Column({ type: String, length: PASSKEY_NAME_MAX_LENGTH })
  name: string;

  @Column({ type: Date })
  createdAt: Date;

  @Column({ type: Date, nullable: true })
  lastUsedAt: Date | null;
}
