import { Column, Entity, PrimaryColumn } from 'typeorm';

export const OAUTH_CLIENT_NAME_MAX_LENGTH = 100;

/**
 * An application registered by an operator, or by itself, to sign people in with Keygate (table
 * `oauth_clients`). A confidential client's secret is stored only as its digest; a public client
 * (a native or browser application) has none and must use PKCE.
 */
@Entity('oauth_clients')
export class OAuthClient {
  /** The `client_id`: a UUID made in code. */
  @PrimaryColumn({ type: String, length: 36 })
  id: string;

  /** Free text from the operator, shown as text wherever it appears (never as markup). */
  @Column({ type: String, length: OAUTH_CLIENT_NAME_MAX_LENGTH })
  name: string;

  /** The exact redirect URIs, a JSON array of strings. */
  @Column({ type: 'text' })
  redirectUris: string;

  /** The exact URIs RP-initiated logout may return to, a JSON array of strings. */
  @Column({ type: 'text' })
  postLogoutRedirectUris: string;

  @Column({ type: Boolean })
  isPublic: boolean;

  /** The scopes it may ask for, space-separated, in OAUTH_SCOPES order. */
  @Column({ type: String, length: 255 })
  scopes: string;

  /**
   * The grants it is registered for, space-separated, in OAUTH_GRANT_TYPES order:
   * `authorization_code` (with its refresh tokens), `device_code`, `client_credentials`.
   */
  @Column({ type: String, length: 255, default: 'authorization_code' })
  grantTypes: string;

  /** SHA-256 of the secret, hex (digestOpaqueToken); null for a public client. */
  @Column({ type: String, length: 64, nullable: true })
  secretDigest: string | null;

  @Column({ type: Date })
  createdAt: Date;

  /**
   * True when the client registered itself (dynamic client registration) rather than an
   * operator: it is never trusted (the consent page always asks and says it is unverified).
   */
  // Written as the migration wrote it, so entities and schema match (test/schema.e2e-spec.ts).
  @Column({ type: Boolean, default: () => 'false' })
  isSelfRegistered: boolean;
}
