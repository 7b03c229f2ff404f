import { Column } from 'typeorm';

/**
 * The public facts of an event that a webhook carries, as columns: queued with the change
 * (`webhook_queue`) and kept with the delivery (`webhook_deliveries`). Not an entity of its own.
 */
export abstract class WebhookEventFacts {
  @Column({ type: String, length: 64 })
  type: string;

  /** Not a foreign key: `account_deleted` must still be delivered once the account is gone. */
  @Column({ type: String, length: 36, nullable: true })
  accountId: string | null;

  @Column({ type: String, length: 36, nullable: true })
  sessionId: string | null;

  @Column({ type: String, length: 64 })
  ip: string;

  @Column({ type: Date })
  occurredAt: Date;
}
