import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DeliverySink } from '../events/delivery-sink.js';
import { WebhookDelivery } from './entities/webhook-delivery.entity.js';
import { WebhookQueued } from './entities/webhook-queued.entity.js';
import { WebhookSubscription } from './entities/webhook-subscription.entity.js';
import { WebhookDeliveryRepository } from './webhook-delivery.repository.js';
import { WebhookSecrets } from './webhook-secrets.js';
import { WebhookSubscriptionRepository } from './webhook-subscription.repository.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * Subscriptions and the deliveries queued for them. Global, as AuthEvents (global too) queues
 * every event through its repository, the DeliverySink; the service and the admin CLI share it.
 * The sender, which delivers, is WebhookSenderModule: the service runs it, the CLI does not.
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([WebhookSubscription, WebhookDelivery, WebhookQueued])],
  providers: [
    WebhookSubscriptionRepository,
    WebhookDeliveryRepository,
    { provide: DeliverySink, useExisting: WebhookDeliveryRepository },
    WebhookSecrets,
    WebhooksService,
  ],
  exports: [
    DeliverySink,
    WebhookDeliveryRepository,
    WebhookSubscriptionRepository,
    WebhookSecrets,
    WebhooksService,
  ],
})
export class WebhooksModule {}
