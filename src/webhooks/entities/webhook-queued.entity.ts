import { Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { WebhookEventFacts } from './webhook-event-facts.js';
import { WebhookSubscription } from './webhook-subscription.entity.js';

/**
 * One event queued for one subscription (table `webhook_queue`), written in the transaction of
 * the change the event records: the event's public facts and nothing else, keyed in event order,
 * so each row is appended to one b-tree (on SQLite `WITHOUT ROWID`, the key is the table). The
 * sender moves queued rows into `webhook_deliveries` in its claim's transaction, where retries,
 * claims and the dead state are kept (decision 0050, Cost).
 */
@Entity('webhook_queue', { withoutRowid: true })
export class WebhookQueued extends WebhookEventFacts {
  /** The audit event's id (UUIDv7): its text sorts in the order events were recorded. */
  @PrimaryColumn({ type: String, length: 36 })
  eventId: string;

  @PrimaryColumn({ type: String, length: 36 })
  subscriptionId: string;

  /** Declared for the foreign key (removing a subscription removes its queue); never loaded. */
  @ManyToOne(() => WebhookSubscription, { onDelete: 'CASCADE' })
  @JoinColumn({
    name: 'subscriptionId',
    foreignKeyConstraintName: 'FK_webhook_queue_subscriptionId',
  })
  subscription?: WebhookSubscription;
}
