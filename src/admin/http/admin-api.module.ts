import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AdminModule } from '../admin.module.js';
import { MailModule } from '../../mail/mail.module.js';
import { AdminApiHttp } from './admin-api-http.js';
import { AdminApiService } from './admin-api.service.js';
import { AdminAuditController } from './admin-audit.controller.js';
import { AdminKeyGuard } from '../keys/admin-key.guard.js';
import { AdminKeysModule } from '../keys/admin-keys.module.js';
import { KeysAdminModule } from '../../keys/admin/keys-admin.module.js';
import { AdminUsersController } from './admin-users.controller.js';
import { FederationAdminModule } from '../../federation/admin/federation-admin.module.js';
import { OAuthClientsAdminModule } from '../../oauth-server/admin/oauth-clients-admin.module.js';
import { OAuthProviderAdminModule } from '../../oauth-server/admin/oauth-provider-admin.module.js';
import { WebhooksAdminModule } from '../../webhooks/admin/webhooks-admin.module.js';

/**
 * The admin HTTP API under `/api/admin/` (issue 28): the account and audit routes over
 * AdminService (the operations the admin CLI runs), the signing-key and webhook routes of those
 * capabilities' folders, all behind admin API keys with scopes (AdminKeyGuard, global).
 */
@Module({
  imports: [AdminModule, AdminKeysModule, MailModule, KeysAdminModule, WebhooksAdminModule],
  controllers: [AdminUsersController, AdminAuditController],
  providers: [
    AdminApiService,
    AdminKeyGuard,
    // Global, so that the admin routes a capability declares in its own folder are guarded too.
    { provide: APP_GUARD, useExisting: AdminKeyGuard },
    AdminApiHttp,
  ],
})
export class AdminApiModule {}

/** Every module whose controllers are admin routes: the admin API's document, and only it. */
export const ADMIN_API_MODULES = [
  AdminApiModule,
  KeysAdminModule,
  WebhooksAdminModule,
  FederationAdminModule,
  OAuthClientsAdminModule,
  OAuthProviderAdminModule,
] as const;
