import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { RandomSource } from '../common/random/random-source.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/app-config.js';
import type { WebhooksConfig } from '../config/settings/webhook-settings.js';
import { RequestActivity } from '../http/request-activity.js';
import { KeygateMetrics, type WebhookOutcome } from '../metrics/keygate-metrics.js';
import { DeliveryLoop, retryDelayMs } from '../outbox/delivery-loop.js';
import { DeliveryPacer } from '../outbox/delivery-pacer.js';
import type { WebhookDelivery } from './entities/webhook-delivery.entity.js';
import type { WebhookSubscription } from './entities/webhook-subscription.entity.js';
import { postWebhook, WebhookCallError } from './webhook-client.js';
import { WebhookDeliveryRepository } from './webhook-delivery.repository.js';
import { webhookBody } from './webhook-events.js';
import { WebhookSecrets } from './webhook-secrets.js';
import { webhookHeaders } from './webhook-signer.js';
import { WebhookSubscriptionRepository } from './webhook-subscription.repository.js';

/** Deliveries claimed, and sent side by side, per batch. */
const CLAIM_BATCH = 32;
const PURGE_EVERY_MS = 10 * 60_000;
/** How often the queue-age gauge is read again within a round that goes on (a paced backlog). */
const QUEUE_AGE_EVERY_MS = 1_000;
const DAY_MS = 24 * 60 * 60_000;

/**
 * Delivers webhooks on the outbox's delivery loop (DeliveryLoop, decision 0050), off every
 * request path: at start, every Webhooks__PollIntervalSeconds, and at once after a transaction
 * queued deliveries. Each delivery is claimed first (of several instances one holds it), signed
 * at the attempt (Standard Webhooks), and POSTed through postWebhook's guarded client. A 2xx
 * answer delivers it; anything else is retried with a doubling delay up to
 * Webhooks__MaxAttempts, then it is dead until `webhooks:replay`. A destination refused as
 * private, or a secret no key opens, is dead at once. A process that dies mid-attempt leaves its
 * claim to lapse, and the delivery is attempted again, with the same `webhook-id`. With
 * Webhooks__YieldToRequests (the default) a DeliveryPacer holds batches back while requests keep
 * the event loop busy, so deliveries never slow the requests that cause them.
 */
@Injectable()
export class WebhookSender implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WebhookSender.name);
  private readonly settings: WebhooksConfig;
  private readonly loop: DeliveryLoop<WebhookDelivery>;
  private lastPurge = 0;
  private lastQueueAge = 0;
  /** Deliveries of the running batch that were delivered: recorded in one statement after it. */
  private delivered: WebhookDelivery[] = [];

  constructor(
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly subscriptions: WebhookSubscriptionRepository,
    private readonly secrets: WebhookSecrets,
    private readonly metrics: KeygateMetrics,
    private readonly clock: Clock,
    random: RandomSource,
    config: AppConfig,
    activity: RequestActivity,
  ) {
    this.settings = config.webhooks;
    let round = new Map<string, WebhookSubscription>();
    this.loop = new DeliveryLoop(
      {
        claimDue: async (claim, limit) => {
          const due = await this.deliveries.claimDue(claim, limit);
          const wanted = [...new Set(due.map((d) => d.subscriptionId))];
          round = new Map((await this.subscriptions.byIds(wanted)).map((s) => [s.id, s]));
          return due;
        },
        attempt: (delivery, signal) =>
          this.attempt(delivery, round.get(delivery.subscriptionId), signal),
        // An account's events to one subscription go one after the other, in recorded order.
        laneOf: (delivery) => `${delivery.subscriptionId} ${delivery.accountId ?? delivery.id}`,
        release: (held) => this.deliveries.release(held),
        afterBatch: async () => {
          await this.recordDelivered();
          if (this.clock.now().getTime() - this.lastQueueAge >= QUEUE_AGE_EVERY_MS) {
            await this.measureQueueAge();
          }
        },
        afterRound: () => this.afterRound(),
      },
      {
        pollIntervalMs: this.settings.pollIntervalMs,
        attemptTimeoutMs: this.settings.timeoutMs,
        batchSize: CLAIM_BATCH,
        pacer: this.settings.yieldToRequests ? new DeliveryPacer(activity) : undefined,
      },
      clock,
      random,
      this.logger,
    );
    this.deliveries.onQueued(() => {
      if (this.secrets.isConfigured) {
        this.loop.wake();
      }
    });
  }

  onApplicationBootstrap(): void {
    // Without Webhooks__EncryptionKeys no subscription can be added or signed for: a deployment
    // that does not use webhooks polls nothing. Rows queued for subscriptions made before the
    // keys were removed wait, pending, until the keys are back.
    if (this.secrets.isConfigured) {
      this.loop.start();
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }

  /** Starts a round now (replays, tests). */
  wake(): void {
    this.loop.wake();
  }

  /** Resolves once no round is running. */
  idle(): Promise<void> {
    return this.loop.idle();
  }

  /** One attempt; false when the delivery will be retried (later ones of its account wait). */
  private async attempt(
    delivery: WebhookDelivery,
    subscription: WebhookSubscription | undefined,
    signal: AbortSignal,
  ): Promise<boolean> {
    if (subscription === undefined) {
      // Removed since the claim: its deliveries went with it.
      return true;
    }
    const secret = this.secrets.open(subscription.id, subscription.secret);
    if (secret === null) {
      await this.settle(delivery, 'dead', 'ESECRET');
      return true;
    }
    const body = webhookBody(delivery);
    let failure: WebhookCallError;
    try {
      const status = await postWebhook(
        {
          url: subscription.url,
          headers: webhookHeaders(secret, delivery.id, this.clock.now(), body),
          body,
        },
        {
          connectTimeoutMs: this.settings.connectTimeoutMs,
          allowPrivateDestinations: this.settings.allowPrivateDestinations,
          signal,
        },
      );
      if (status >= 200 && status < 300) {
        this.delivered.push(delivery);
        return true;
      }
      failure = new WebhookCallError(`HTTP ${status}`);
    } catch (error: unknown) {
      failure = error instanceof WebhookCallError ? error : new WebhookCallError('EUNKNOWN');
    }
    const isLast = !failure.isRetryable || delivery.attempts >= this.settings.maxAttempts;
    await this.settle(delivery, isLast ? 'dead' : 'retried', failure.code);
    return isLast;
  }

  private async recordDelivered(): Promise<void> {
    const done = this.delivered;
    this.delivered = [];
    if (done.length === 0) {
      return;
    }
    const recorded = await this.deliveries.deliveredAll(done, this.clock.now());
    if (this.metrics.enabled) {
      this.metrics.webhookDeliveries.inc({ outcome: 'delivered' }, done.length);
    }
    if (recorded < done.length) {
      this.logger.warn(
        `${done.length - recorded} webhook(s) were delivered after their claim had lapsed`,
      );
    }
    this.logger.debug(`${done.length} webhook(s) delivered`);
  }

  private async settle(
    delivery: WebhookDelivery,
    outcome: Exclude<WebhookOutcome, 'delivered'>,
    error: string | null,
  ): Promise<void> {
    const now = this.clock.now();
    let held: boolean;
    if (outcome === 'dead') {
      held = await this.deliveries.dead(delivery, now, error ?? 'EUNKNOWN');
    } else {
      const delay = retryDelayMs(
        delivery.attempts,
        this.settings.retryDelayMs,
        this.settings.maxRetryDelayMs,
      );
      held = await this.deliveries.retryAt(
        delivery,
        new Date(now.getTime() + delay),
        error ?? 'EUNKNOWN',
      );
    }
    if (this.metrics.enabled) {
      this.metrics.webhookDeliveries.inc({ outcome });
    }
    const what = `Webhook ${delivery.id} (${delivery.type}) attempt ${delivery.attempts}`;
    if (!held) {
      this.logger.warn(`${what}: ${outcome} after its claim had lapsed`);
    } else if (outcome === 'dead') {
      this.logger.error(`${what}: dead (${error}); webhooks:replay sends it again`);
    } else {
      this.logger.warn(`${what}: failed (${error}); retried later`);
    }
  }

  /** Sets the queue-age gauge: how long ago the oldest pending delivery's event happened. */
  private async measureQueueAge(): Promise<void> {
    this.lastQueueAge = this.clock.now().getTime();
    if (!this.metrics.enabled) {
      return;
    }
    const oldest = await this.deliveries.oldestPendingAt();
    const now = this.clock.now().getTime();
    this.metrics.webhookQueueAge.set(
      oldest === null ? 0 : Math.max(0, (now - oldest.getTime()) / 1000),
    );
  }

  private async afterRound(): Promise<void> {
    await this.measureQueueAge();
    const now = this.clock.now().getTime();
    if (now - this.lastPurge < PURGE_EVERY_MS) {
      return;
    }
    this.lastPurge = now;
    const deleted = await this.deliveries.purgeDeliveredBefore(
      new Date(now - this.settings.retentionDays * DAY_MS),
    );
    if (deleted > 0) {
      this.logger.log(`Deleted ${deleted} delivered webhook(s)`);
    }
  }
}
