import { Injectable, Logger } from '@nestjs/common';
import type { AdminReasonDto } from '../../common/admin-route/admin-reason.dto.js';
import { adminActorOf, type AdminCall } from '../../common/admin-route/current-admin.decorator.js';
import { forRequest } from '../../logging/log-fields.js';
import { WebhooksService, type WebhookSubscriptionSummary } from '../webhooks.service.js';
import type {
  AddedWebhookResponseDto,
  AddWebhookDto,
  DeadWebhookListResponseDto,
  ReplayWebhooksDto,
  ReplayWebhooksResponseDto,
  WebhookListResponseDto,
  WebhookSubscriptionResponseDto,
} from './dto/admin-webhook.dto.js';

/** The admin API's side of the webhook operations: WebhooksService's, as the CLI's `webhooks:*`. */
@Injectable()
export class WebhooksAdminService {
  private readonly logger = new Logger(WebhooksAdminService.name);

  constructor(private readonly webhooksService: WebhooksService) {}

  async webhooks(): Promise<WebhookListResponseDto> {
    return { webhooks: (await this.webhooksService.list()).map(webhookBody) };
  }

  async addWebhook(body: AddWebhookDto, call: AdminCall): Promise<AddedWebhookResponseDto> {
    // The service parses the CLI's form (`all`, or types comma-separated): one rule for both.
    const events = body.events === 'all' ? 'all' : body.events.join(',');
    const added = await this.webhooksService.add(
      { url: body.url, events },
      call.origin,
      adminActorOf(call, body),
    );
    this.logger.log(
      `Admin key ${call.key.name} added webhook subscription ${added.id}`,
      forRequest(call.origin.requestId),
    );
    return { ...webhookBody(added), secret: added.secret };
  }

  async removeWebhook(id: string, body: AdminReasonDto, call: AdminCall): Promise<void> {
    await this.webhooksService.remove(id, call.origin, adminActorOf(call, body));
    this.logger.log(
      `Admin key ${call.key.name} removed webhook subscription ${id}`,
      forRequest(call.origin.requestId),
    );
  }

  async deadWebhooks(): Promise<DeadWebhookListResponseDto> {
    const dead = await this.webhooksService.dead();
    return {
      deliveries: dead.map((delivery) => ({
        ...delivery,
        finishedAt: delivery.finishedAt?.toISOString() ?? null,
      })),
    };
  }

  async replayWebhooks(
    body: ReplayWebhooksDto,
    call: AdminCall,
  ): Promise<ReplayWebhooksResponseDto> {
    const replayedCount = await this.webhooksService.replay(
      body.id ?? 'all',
      call.origin,
      adminActorOf(call, body),
    );
    this.logger.log(
      `Admin key ${call.key.name} replayed ${replayedCount} dead webhook delivery(ies)`,
      forRequest(call.origin.requestId),
    );
    return { replayedCount };
  }
}

function webhookBody(subscription: WebhookSubscriptionSummary): WebhookSubscriptionResponseDto {
  return {
    id: subscription.id,
    url: subscription.url,
    events: subscription.events,
    isEnabled: subscription.isEnabled,
    createdAt: subscription.createdAt.toISOString(),
  };
}
