import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** Longest endpoint URL a subscription may name. */
export const WEBHOOK_URL_MAX_LENGTH = 2048;

/** What `events` holds for a subscription to every type, present and future. */
export const ALL_EVENTS = '*';

/** One receiver of webhooks (table `webhook_subscriptions`). */
@Entity('webhook_subscriptions')
export class WebhookSubscription {
  @PrimaryColumn({ type: String, length: 36 })
  id: string;

  @Column({ type: String, length: WEBHOOK_URL_MAX_LENGTH })
  url: string;

  /**
   * `*` for every type, or the types wanted between commas, with a comma at each end
   * (`,registered,account_deleted,`), so a statement matches one type with a substring search.
   */
  @Column({ type: 'text' })
  events: string;

  /** The `whsec_…` signing secret, sealed (SealedBox under Webhooks__EncryptionKeys). */
  @Column({ type: String, length: 255 })
  secret: string;

  /** Every recorded event looks its subscribers up through this index. */
  @Index('IDX_webhook_subscriptions_isEnabled')
  @Column({ type: Boolean })
  isEnabled: boolean;

  @Column({ type: Date })
  createdAt: Date;
}
