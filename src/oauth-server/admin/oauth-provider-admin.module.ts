import { Module } from '@nestjs/common';
import { ConsentRequestsController } from '../consent/consent-requests.controller.js';
import { AdminOAuthGrantsController } from '../grants/admin-oauth-grants.controller.js';
import { OAuthProviderModule } from '../oauth-provider.module.js';

/**
 * The admin routes over the running provider: an account's grants and the consent API of a
 * team's own consent page. Apart from OAuthProviderModule so that they are documented with the
 * admin API (admin-openapi.json), not the person's; mounted, like it, only while
 * OAuthServer__Enabled is true.
 */
@Module({
  imports: [OAuthProviderModule],
  controllers: [AdminOAuthGrantsController, ConsentRequestsController],
})
export class OAuthProviderAdminModule {}
