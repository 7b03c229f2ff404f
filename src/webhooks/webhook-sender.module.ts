import { Module } from '@nestjs/common';
import { RequestActivity } from '../http/request-activity.js';
import { WebhookSender } from './webhook-sender.js';
import { WebhooksModule } from './webhooks.module.js';

/** The delivery of webhooks, in the service's processes (never in the admin CLI's). */
@Module({
  imports: [WebhooksModule],
  providers: [WebhookSender, RequestActivity],
  exports: [WebhookSender],
})
export class WebhookSenderModule {}
