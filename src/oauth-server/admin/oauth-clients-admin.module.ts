import { Module } from '@nestjs/common';
import { OAuthClientsModule } from '../oauth-clients.module.js';
import { AdminOAuthClientsController } from './admin-oauth-clients.controller.js';
import { OAuthClientsAdminService } from './oauth-clients-admin.service.js';

/**
 * The client routes of the admin API (`/api/admin/oauth/clients`). The application mounts it
 * only while OAuthServer__Enabled is true; AdminApiModule's global guard checks its keys.
 */
@Module({
  imports: [OAuthClientsModule],
  controllers: [AdminOAuthClientsController],
  providers: [OAuthClientsAdminService],
})
export class OAuthClientsAdminModule {}
