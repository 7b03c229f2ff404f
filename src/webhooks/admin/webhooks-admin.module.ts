import { Module } from '@nestjs/common';
import { WebhooksModule } from '../webhooks.module.js';
import { AdminWebhooksController } from './admin-webhooks.controller.js';
import { WebhooksAdminService } from './webhooks-admin.service.js';

/** The webhook routes of the admin API (`/api/admin/webhooks`), which AdminApiModule mounts. */
@Module({
  imports: [WebhooksModule],
  controllers: [AdminWebhooksController],
  providers: [WebhooksAdminService],
})
export class WebhooksAdminModule {}
