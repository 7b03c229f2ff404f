import type {
  AddedWebhookSubscription,
  DeadWebhookDelivery,
  WebhookSubscriptionSummary,
} from '../webhooks.service.js';

const eventsText = (events: WebhookSubscriptionSummary['events']): string =>
  events === 'all' ? 'all' : events.join(',');

/** What the webhook commands print. */
export const WebhookCliOutput = {
  /** The secret is printed here and nowhere else, ever. */
  added: (added: AddedWebhookSubscription): string =>
    [
      `id: ${added.id}`,
      `url: ${added.url}`,
      `events: ${eventsText(added.events)}`,
      `secret: ${added.secret}`,
      'The secret is shown this once: give it to the receiver, which verifies signatures with it.',
    ].join('\n'),

  list: (subscriptions: readonly WebhookSubscriptionSummary[]): string =>
    subscriptions.length === 0
      ? 'No webhook subscriptions.'
      : subscriptions
          .map(
            (s) =>
              `${s.id}  ${s.isEnabled ? 'enabled' : 'disabled'}  ${s.createdAt.toISOString()}  ` +
              `events=${eventsText(s.events)}  ${s.url}`,
          )
          .join('\n'),

  removed: (id: string): string =>
    `Removed webhook subscription ${id} and its deliveries not yet made.`,

  dead: (deliveries: readonly DeadWebhookDelivery[]): string =>
    deliveries.length === 0
      ? 'No dead webhook deliveries.'
      : deliveries
          .map(
            (d) =>
              `${d.id}  ${d.type}  account=${d.accountId ?? '-'}  attempts=${d.attempts}  ` +
              `error=${d.lastError ?? '-'}  died=${d.finishedAt?.toISOString() ?? '-'}`,
          )
          .join('\n'),

  replayed: (count: number): string =>
    `Replayed ${count} dead webhook delivery(ies): the service delivers them at its next round.`,
} as const;
