import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { User } from '../../users/entities/user.entity.js';
import { OAUTH_CLIENT_ID_MAX_LENGTH } from '../client-metadata/metadata-document-feature.js';

/**
 * A person's consent to a client (table `oauth_consents`): the scopes granted and the protocol
 * library's grant that holds them. Remembered across browser sessions, listed to the person and
 * withdrawn by them (which ends the grant's tokens). Goes with the account.
 */
@Entity('oauth_consents')
export class OAuthConsent {
  @PrimaryColumn({ type: String, length: 36 })
  userId: string;

  /** The account; deleting it deletes its consents. */
  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'userId', foreignKeyConstraintName: 'FK_oauth_consents_userId' })
  owner?: User;

  /** An operator's or a registration's UUID, or a client ID metadata document's URL. */
  @PrimaryColumn({ type: String, length: OAUTH_CLIENT_ID_MAX_LENGTH })
  clientId: string;

  /** Space-separated, in OAUTH_SCOPES order. */
  @Column({ type: String, length: 255 })
  scopes: string;

  /** The library's grant id (not a bearer secret: nothing is reached with it from outside). */
  @Column({ type: String, length: 64 })
  grantId: string;

  @Column({ type: Date })
  grantedAt: Date;
}
