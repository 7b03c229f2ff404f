import { Injectable } from '@nestjs/common';
import { isIP } from 'node:net';
import {
  InvalidArgumentError,
  NotFoundError,
  UnavailableError,
} from '../common/errors/domain-errors.js';
import { RandomSource } from '../common/random/random-source.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { Clock } from '../common/time/clock.js';
import { INVISIBLE_CHARACTERS } from '../common/validation/string-rules.js';
import { AppConfig } from '../config/app-config.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { AdminApiActor, AuthEventType } from '../events/auth-event.js';
import { AuthEvents } from '../events/auth-events.js';
import type { WebhookDelivery } from './entities/webhook-delivery.entity.js';
import {
  ALL_EVENTS,
  WEBHOOK_URL_MAX_LENGTH,
  WebhookSubscription,
} from './entities/webhook-subscription.entity.js';
import { isPublicAddress } from '../common/network/destination-guard.js';
import { WebhookDeliveryRepository } from './webhook-delivery.repository.js';
import { WEBHOOK_EVENT_TYPES } from './webhook-events.js';
import { WebhookSecrets } from './webhook-secrets.js';
import { newWebhookSecret } from './webhook-signer.js';
import { WebhookSubscriptionRepository } from './webhook-subscription.repository.js';
import { WebhooksMessages } from './webhooks.messages.js';

/** A subscription as it is shown: never its secret. */
export interface WebhookSubscriptionSummary {
  readonly id: string;
  readonly url: string;
  /** `all`, or the types wanted. */
  readonly events: 'all' | readonly AuthEventType[];
  readonly isEnabled: boolean;
  readonly createdAt: Date;
}

/** A new subscription, with its secret: shown once, never again. */
export interface AddedWebhookSubscription extends WebhookSubscriptionSummary {
  readonly secret: string;
}

/** A dead delivery as `webhooks:dead` shows it. */
export type DeadWebhookDelivery = Pick<
  WebhookDelivery,
  | 'id'
  | 'subscriptionId'
  | 'eventId'
  | 'type'
  | 'accountId'
  | 'attempts'
  | 'lastError'
  | 'finishedAt'
>;

/** How many dead deliveries `webhooks:dead` lists at most. */
export const DEAD_LIST_LIMIT = 1000;

/**
 * The webhook subscriptions and their dead letters: one method per operation, for the admin CLI
 * and the admin API alike. Each change is audited (`admin_webhook_*`) in its own transaction.
 */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly subscriptions: WebhookSubscriptionRepository,
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly secrets: WebhookSecrets,
    private readonly events: AuthEvents,
    private readonly unitOfWork: UnitOfWork,
    private readonly clock: Clock,
    private readonly random: RandomSource,
    private readonly config: AppConfig,
  ) {}

  /**
   * Subscribes `url` to `events` (`all`, or a comma-separated list of catalogue types). The
   * secret is made here and returned once; only its sealed form is stored. `actor` (here and
   * below) is the admin API key that asked, recorded in the event; none for the CLI.
   */
  async add(
    request: { readonly url: string; readonly events: string },
    origin: RequestOrigin,
    actor?: AdminApiActor,
  ): Promise<AddedWebhookSubscription> {
    if (!this.secrets.isConfigured) {
      throw new UnavailableError(WebhooksMessages.notConfigured);
    }
    const url = this.checkedUrl(request.url);
    const events = parseEventList(request.events);
    const secret = newWebhookSecret(this.random);
    const subscription = Object.assign(new WebhookSubscription(), {
      id: this.random.uuid(),
      url,
      events: events === 'all' ? ALL_EVENTS : `,${events.join(',')},`,
      secret: '',
      isEnabled: true,
      createdAt: this.clock.now(),
    });
    subscription.secret = this.secrets.seal(subscription.id, secret);
    await this.unitOfWork.transaction(async (m) => {
      await this.subscriptions.insertWithin(m, subscription);
      await this.events.record(
        m,
        {
          type: 'admin_webhook_added',
          userId: null,
          subscriptionId: subscription.id,
          ...(actor === undefined ? {} : { actor }),
        },
        origin,
      );
    });
    return { ...summaryOf(subscription), secret };
  }

  async list(): Promise<WebhookSubscriptionSummary[]> {
    return (await this.subscriptions.all()).map(summaryOf);
  }

  /** Removes a subscription and every delivery to it, pending or dead. */
  async remove(id: string, origin: RequestOrigin, actor?: AdminApiActor): Promise<void> {
    await this.unitOfWork.transaction(async (m) => {
      if (!(await this.subscriptions.deleteWithin(m, id))) {
        throw new NotFoundError(WebhooksMessages.unknownSubscription);
      }
      await this.events.record(
        m,
        {
          type: 'admin_webhook_removed',
          userId: null,
          subscriptionId: id,
          ...(actor === undefined ? {} : { actor }),
        },
        origin,
      );
    });
  }

  /** The dead deliveries, oldest event first. */
  async dead(limit = DEAD_LIST_LIMIT): Promise<DeadWebhookDelivery[]> {
    return (await this.deliveries.deadOnes(limit)).map(
      ({ id, subscriptionId, eventId, type, accountId, attempts, lastError, finishedAt }) => ({
        id,
        subscriptionId,
        eventId,
        type,
        accountId,
        attempts,
        lastError,
        finishedAt,
      }),
    );
  }

  /**
   * Makes the dead delivery `id` (or every dead one, for `all`) pending again, due now, with a
   * fresh count of attempts and the same `webhook-id`. Returns how many.
   */
  async replay(id: string, origin: RequestOrigin, actor?: AdminApiActor): Promise<number> {
    const deliveryId = id === 'all' ? null : id;
    return this.unitOfWork.transaction(async (m) => {
      const replayedCount = await this.deliveries.replayWithin(m, deliveryId, this.clock.now());
      if (deliveryId !== null && replayedCount === 0) {
        throw new NotFoundError(WebhooksMessages.unknownDeadDelivery);
      }
      await this.events.record(
        m,
        {
          type: 'admin_webhook_replayed',
          userId: null,
          deliveryId,
          replayedCount,
          ...(actor === undefined ? {} : { actor }),
        },
        origin,
      );
      return replayedCount;
    });
  }

  /** An absolute http(s) URL without credentials or fragment; a private IP only if allowed. */
  private checkedUrl(text: string): string {
    const trimmed = text.trim();
    let url: URL | null = null;
    try {
      url = new URL(trimmed);
    } catch {
      url = null;
    }
    if (
      url === null ||
      trimmed.length > WEBHOOK_URL_MAX_LENGTH ||
      /[\p{Cc}\s]/u.test(trimmed) ||
      INVISIBLE_CHARACTERS.test(trimmed) ||
      (url.protocol !== 'http:' && url.protocol !== 'https:') ||
      url.username !== '' ||
      url.password !== '' ||
      trimmed.includes('#') ||
      url.href.length > WEBHOOK_URL_MAX_LENGTH
    ) {
      throw new InvalidArgumentError(WebhooksMessages.badUrl);
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const isPrivate = isIP(host) !== 0 ? !isPublicAddress(host) : /(^|\.)localhost\.?$/i.test(host);
    if (isPrivate && !this.config.webhooks.allowPrivateDestinations) {
      throw new InvalidArgumentError(WebhooksMessages.privateDestination);
    }
    return url.href;
  }
}

/** `all`, or the listed types, each known, without repeats, in catalogue order. */
export function parseEventList(text: string): 'all' | AuthEventType[] {
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
  if (names.length === 1 && names[0] === 'all') {
    return 'all';
  }
  if (names.length === 0) {
    throw new InvalidArgumentError(WebhooksMessages.noEvents);
  }
  const unknown = names.filter(
    (name) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(name),
  );
  if (unknown.length > 0) {
    throw new InvalidArgumentError(WebhooksMessages.unknownEvents);
  }
  return WEBHOOK_EVENT_TYPES.filter((type) => names.includes(type));
}

function summaryOf(subscription: WebhookSubscription): WebhookSubscriptionSummary {
  return {
    id: subscription.id,
    url: subscription.url,
    events:
      subscription.events === ALL_EVENTS
        ? 'all'
        : WEBHOOK_EVENT_TYPES.filter((type) => subscription.events.includes(`,${type},`)),
    isEnabled: subscription.isEnabled,
    createdAt: subscription.createdAt,
  };
}
