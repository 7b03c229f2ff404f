import {
  AUTH_EVENT_TYPES,
  type AuthEventRecord,
  type AuthEventType,
} from '../events/auth-event.js';
import type { WebhookDelivery } from './entities/webhook-delivery.entity.js';

/**
 * The catalogue: every event type the service records, from the one list (src/events/auth-event.ts),
 * so a type added there is delivered to `all` subscriptions without a line here; docs/webhooks.md
 * documents each one (test/checks/webhook-events.check-spec.ts compares them).
 */
export const WEBHOOK_EVENT_TYPES: readonly AuthEventType[] = AUTH_EVENT_TYPES;

const IP_MAX_LENGTH = 64;

/**
 * What a webhook tells of an event: its public facts only, the same for every type. Never a
 * token, code, password, digest, secret, or the e-mail a failed login typed (people type
 * passwords there).
 */
export interface WebhookFacts {
  readonly type: AuthEventType;
  /** The account, when the event has one. */
  readonly accountId: string | null;
  /** The session (refresh-token family) the event is about, when there is one. */
  readonly sessionId: string | null;
  /** The client's address, or the internal source (`admin-cli`, `mail`) of work no request started. */
  readonly ip: string;
  readonly occurredAt: Date;
}

export function webhookFactsOf({ event, origin, at }: AuthEventRecord): WebhookFacts {
  return {
    type: event.type,
    accountId: event.userId,
    sessionId: 'familyId' in event ? event.familyId : null,
    ip: origin.ip.slice(0, IP_MAX_LENGTH),
    occurredAt: at,
  };
}

/**
 * The body of a delivery (Standard Webhooks: `type`, `timestamp`, `data`), made from its row: the
 * same bytes at every attempt and every replay, so a receiver may hash it.
 */
export function webhookBody(
  delivery: Pick<
    WebhookDelivery,
    'eventId' | 'type' | 'accountId' | 'sessionId' | 'ip' | 'occurredAt'
  >,
): string {
  return JSON.stringify({
    type: delivery.type,
    timestamp: delivery.occurredAt.toISOString(),
    data: {
      eventId: delivery.eventId,
      accountId: delivery.accountId,
      sessionId: delivery.sessionId,
      ip: delivery.ip,
    },
  });
}

/**
 * The SQL expression of the `webhook-id` of one event to one subscription, from the SQL
 * expressions of their ids: `msg_<event id>_<subscription id>`, stable across attempts and
 * replays (the column `webhook_deliveries.id`).
 */
export function webhookIdSql(eventId: string, subscriptionId: string): string {
  return `'msg_' || ${eventId} || '_' || ${subscriptionId}`;
}
