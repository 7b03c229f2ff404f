import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { WebhookEventFacts } from './webhook-event-facts.js';
import { WebhookSubscription } from './webhook-subscription.entity.js';

/** `pending`: to be delivered, maybe after failed attempts. `delivered` is final; `dead` waits for a replay. */
export type WebhookDeliveryState = 'pending' | 'delivered' | 'dead';

/**
 * The rows that can hold an account's later deliveries back: pending ones that a claim holds
 * (`claimedBy`) or whose next attempt moved off the event's time (a retry, a replay), on the
 * table alias `alias` when given. A fresh row is neither, so the partial index on them,
 * `IDX_webhook_deliveries_held`, costs the change's transaction nothing (decision 0050). A query
 * reads that index only when it repeats this condition.
 */
export function heldDeliveries(alias?: string): string {
  const column = (name: string) => (alias === undefined ? `"${name}"` : `${alias}."${name}"`);
  return (
    `${column('state')} = 'pending' AND ` +
    `(${column('nextAttemptAt')} <> ${column('occurredAt')} OR ${column('claimedBy')} IS NOT NULL)`
  );
}

/** Room for `msg_`, an event id, `_` and a subscription id. */
export const WEBHOOK_ID_MAX_LENGTH = 80;

/**
 * One event to deliver to one subscription (table `webhook_deliveries`), moved here from
 * `webhook_queue` (written in the transaction of the change the event records) by the claim that
 * first takes it. Holds the event's public facts only; its body is made from them at each
 * attempt, the same bytes every time. Delivered, it is kept for Webhooks__RetentionDays.
 */
@Entity('webhook_deliveries')
@Index('IDX_webhook_deliveries_state_eventId', ['state', 'eventId'])
@Index('IDX_webhook_deliveries_held', ['subscriptionId', 'accountId', 'eventId'], {
  where: heldDeliveries(),
})
export class WebhookDelivery extends WebhookEventFacts {
  /** The `webhook-id` header: `msg_<event id>_<subscription id>`, the same at every attempt. */
  @PrimaryColumn({ type: String, length: WEBHOOK_ID_MAX_LENGTH })
  id: string;

  @Column({ type: String, length: 36 })
  subscriptionId: string;

  /** Declared for the foreign key (removing a subscription removes its deliveries); never loaded. */
  @ManyToOne(() => WebhookSubscription, { onDelete: 'CASCADE' })
  @JoinColumn({
    name: 'subscriptionId',
    foreignKeyConstraintName: 'FK_webhook_deliveries_subscriptionId',
  })
  subscription?: WebhookSubscription;

  /** The audit event's id (UUIDv7): its text sorts in the order events were recorded. */
  @Column({ type: String, length: 36 })
  eventId: string;

  @Column({ type: String, length: 16 })
  state: WebhookDeliveryState;

  // Written as the migration wrote it, so entities and schema match (test/schema.e2e-spec.ts).
  @Column({ type: Number, default: 0 })
  attempts: number;

  @Column({ type: Date })
  nextAttemptAt: Date;

  /** The claim of the sender delivering it, and until when that claim holds. */
  @Column({ type: String, length: 36, nullable: true })
  claimedBy: string | null;

  @Column({ type: Date, nullable: true })
  claimedUntil: Date | null;

  @Column({ type: Date, nullable: true })
  finishedAt: Date | null;

  /** The last failure: a code and an HTTP status, never the receiver's text. */
  @Column({ type: String, length: 100, nullable: true })
  lastError: string | null;
}
