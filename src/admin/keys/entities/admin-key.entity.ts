import { Column, Entity, Index, PrimaryColumn, Unique } from 'typeorm';

export const ADMIN_KEY_NAME_MAX_LENGTH = 64;

/**
 * An admin API key (table `admin_keys`): its name, its scopes and the digest of its secret. The
 * secret itself is shown once, when the CLI creates the key, and stored nowhere.
 */
@Entity('admin_keys')
@Unique('UQ_admin_keys_name', ['name'])
@Unique('UQ_admin_keys_keyDigest', ['keyDigest'])
@Index('IDX_admin_keys_revokedAt', ['revokedAt'])
export class AdminKey {
  /** UUID generated in code. */
  @PrimaryColumn({ type: String, length: 36 })
  id: string;

  /** Chosen by the operator; names the key in the audit trail. Never reused, even once revoked. */
  @Column({ type: String, length: ADMIN_KEY_NAME_MAX_LENGTH })
  name: string;

  /** SHA-256 of the secret, hex (digestOpaqueToken): the secret has 256 bits of entropy. */
  @Column({ type: String, length: 64 })
  keyDigest: string;

  /** The key's scopes, space-separated, in ADMIN_SCOPES order. */
  @Column({ type: String, length: 255 })
  scopes: string;

  @Column({ type: Date })
  createdAt: Date;

  /** When `admin-keys:revoke` revoked it; null while it opens the admin API. */
  @Column({ type: Date, nullable: true })
  revokedAt: Date | null;
}
