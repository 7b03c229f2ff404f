import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { User } from '../../users/entities/user.entity.js';

/** What a flow is for: a sign-in, or linking an identity to a signed-in account. */
export type FlowPurpose = 'sign_in' | 'link';

/**
 * A flow sent to a provider and not yet back (table `federation_flows`), keyed by the SHA-256 of
 * its `state`; the PKCE verifier and nonce sent with it are derived from the state, so nothing
 * here is a secret. Deleted when its callback arrives (single use) or once expired.
 */
@Entity('federation_flows')
export class FederationFlow {
  @PrimaryColumn({ type: String, length: 64 })
  stateHash: string;

  /** The provider it was started at: a callback at another provider is refused. */
  @Column({ type: String, length: 40 })
  provider: string;

  @Column({ type: String, length: 16 })
  purpose: FlowPurpose;

  /** The account being linked to (purpose `link`); null for a sign-in. */
  @Index('IDX_federation_flows_userId')
  @Column({ type: String, length: 36, nullable: true })
  userId: string | null;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'userId', foreignKeyConstraintName: 'FK_federation_flows_userId' })
  owner?: User;

  /** One of Federation__RedirectUrls, exactly. */
  @Column({ type: String, length: 2048 })
  redirectTo: string;

  /** The front end's S256 challenge, which its one-time code will need the verifier of. */
  @Column({ type: String, length: 128 })
  codeChallenge: string;

  @Column({ type: Date })
  createdAt: Date;

  @Index('IDX_federation_flows_expiresAt')
  @Column({ type: Date })
  expiresAt: Date;
}
