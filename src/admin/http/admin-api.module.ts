import { Module } from '@nestjs/common';
import { AdminModule } from '../admin.module.js';
import { MailModule } from '../../mail/mail.module.js';
import { AdminApiHttp } from './admin-api-http.js';
import { AdminApiService } from './admin-api.service.js';
import { AdminAuditController } from './admin-audit.controller.js';
import { AdminKeyGuard } from '../keys/admin-key.guard.js';
import { AdminKeysModule } from '../keys/admin-keys.module.js';
import { KeysModule } from '../../keys/keys.module.js';
import { AdminSigningKeysController } from '../../keys/admin/admin-signing-keys.controller.js';
import { AdminUsersController } from './admin-users.controller.js';
import { WebhooksModule } from '../../webhooks/webhooks.module.js';
import { AdminWebhooksController } from '../../webhooks/admin/admin-webhooks.controller.js';

/**
 * The admin HTTP API under `/api/admin/` (issue 28): controllers over AdminService, the
 * operations the admin CLI runs, behind admin API keys with scopes (AdminKeyGuard).
 */
@Module({
  imports: [AdminModule, AdminKeysModule, MailModule, KeysModule, WebhooksModule],
  controllers: [
    AdminUsersController,
    AdminAuditController,
    AdminSigningKeysController,
    AdminWebhooksController,
  ],
  providers: [AdminApiService, AdminKeyGuard, AdminApiHttp],
})
export class AdminApiModule {}
