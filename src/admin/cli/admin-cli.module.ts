import { Module, type DynamicModule } from '@nestjs/common';
import { RandomModule } from '../../common/random/random.module.js';
import { ClockModule } from '../../common/time/clock.module.js';
import { AppConfigModule } from '../../config/app-config.module.js';
import { DatabaseModule, type DatabaseOptions } from '../../database/database.module.js';
import { EventsModule } from '../../events/events.module.js';
import { WebhooksModule } from '../../webhooks/webhooks.module.js';
import { AdminKeysModule } from '../keys/admin-keys.module.js';
import { AdminModule } from '../admin.module.js';
import { KeysModule } from '../../keys/keys.module.js';
import { IdentitiesAdminModule } from '../../federation/admin/identities-admin.module.js';
import { OAuthClientsModule } from '../../oauth-server/oauth-clients.module.js';

/**
 * The admin CLI's application: the service's configuration and database, and only what the
 * commands need. No HTTP listener, and no cleanup timer (a one-shot process runs it on demand).
 */
@Module({})
export class AdminCliModule {
  /**
   * Rejects with a ConfigurationError when the configuration is invalid. Without `migrate`, the
   * database is used as it is, pending migrations left pending: for diagnostics a migration needs.
   */
  static async forRoot(database: DatabaseOptions = {}): Promise<DynamicModule> {
    return {
      module: AdminCliModule,
      imports: [
        await AppConfigModule.forRoot({ overrides: { TokenCleanup__Enabled: 'false' } }),
        ClockModule,
        RandomModule,
        EventsModule,
        DatabaseModule.forRoot(database),
        AdminModule,
        KeysModule,
        WebhooksModule,
        AdminKeysModule,
        OAuthClientsModule,
        IdentitiesAdminModule,
      ],
    };
  }
}
