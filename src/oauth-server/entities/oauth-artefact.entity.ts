import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * What the protocol library stores (table `oauth_artefacts`): authorization codes, access and
 * refresh tokens, grants, browser sessions, interactions, and whatever else it names a model.
 * A row is keyed by the SHA-256 of the artefact's id, never by the id: the id of a code, a token
 * or a session is the bearer secret itself, and the library hands it back on every lookup.
 */
@Entity('oauth_artefacts')
export class OAuthArtefact {
  /** The library's model name (`AuthorizationCode`, `RefreshToken`, `Session`, ...). */
  @PrimaryColumn({ type: String, length: 40 })
  kind: string;

  /** SHA-256 of the id, hex. */
  @PrimaryColumn({ type: String, length: 64 })
  idDigest: string;

  /** The library's payload as JSON, without the id and without any copy of a bearer secret. */
  @Column({ type: 'text' })
  payload: string;

  /** The grant the artefact belongs to: revoking the grant deletes every row that names it. */
  @Index('IDX_oauth_artefacts_grantId')
  @Column({ type: String, length: 64, nullable: true })
  grantId: string | null;

  /** SHA-256 of a session's `uid` (findByUid), hex. */
  @Column({ type: String, length: 64, nullable: true })
  uidDigest: string | null;

  /** SHA-256 of a device flow's user code (findByUserCode), hex. */
  @Column({ type: String, length: 64, nullable: true })
  userCodeDigest: string | null;

  /** When the library said it expires; null: it did not say. The cleanup deletes past rows. */
  @Index('IDX_oauth_artefacts_expiresAt')
  @Column({ type: Date, nullable: true })
  expiresAt: Date | null;

  /** When a code or a refresh token was used; set once, by one statement (see consume). */
  @Column({ type: Date, nullable: true })
  consumedAt: Date | null;
}
