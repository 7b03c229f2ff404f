import { OAuthClientsAdminModule } from './admin/oauth-clients-admin.module.js';
import { OAuthProviderAdminModule } from './admin/oauth-provider-admin.module.js';
import { OAuthProviderModule } from './oauth-provider.module.js';

/** What the application mounts while OAuthServer__Enabled is true, and only then. */
export const OAUTH_SERVER_MODULES = [
  OAuthClientsAdminModule,
  OAuthProviderModule,
  OAuthProviderAdminModule,
] as const;
