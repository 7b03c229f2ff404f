import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { AdminApiModule } from './admin/http/admin-api.module.js';
import { AuditModule } from './audit/audit.module.js';
import { AuditRetentionModule } from './audit/audit-retention.module.js';
import { AccountModule } from './account/account.module.js';
import { AuthModule } from './auth/auth.module.js';
import { JwtAuthGuard } from './auth/jwt-auth.guard.js';
import { AllExceptionsFilter } from './common/filters/all-exceptions.filter.js';
import { RandomModule } from './common/random/random.module.js';
import { ClockModule } from './common/time/clock.module.js';
import { AppValidationPipe } from './common/validation/validation.pipe.js';
import { AppConfigModule, type AppConfigOptions } from './config/app-config.module.js';
import { DatabaseModule } from './database/database.module.js';
import { extensionMigrationsOf, type KeygateExtension } from './database/keygate-extension.js';
import { EventsModule } from './events/events.module.js';
import { HealthModule } from './health/health.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { PasskeyRoutesModule } from './passkeys/passkey-routes.module.js';
import { PasswordsModule } from './passwords/passwords.module.js';
import { ActiveSessionGuard } from './sessions/active-session.guard.js';
import { SessionsModule } from './sessions/sessions.module.js';
import { LoggingModule, type LoggingOptions } from './logging/logging.module.js';
import { TokensModule } from './tokens/tokens.module.js';
import { TwoFactorRoutesModule } from './two-factor/two-factor-routes.module.js';
import { UsersModule } from './users/users.module.js';
import { KeyServingModule } from './keys/key-serving.module.js';
import { EmailCodesModule } from './email-codes/email-codes.module.js';
import { FederationAdminModule } from './federation/admin/federation-admin.module.js';
import { FederationModule } from './federation/federation.module.js';
import { WebhookSenderModule } from './webhooks/webhook-sender.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';
import { OAUTH_SERVER_MODULES } from './oauth-server/oauth-server-modules.js';

export interface AppModuleOptions extends AppConfigOptions, LoggingOptions {
  /** Modules a team adds, with the migrations of their tables (src/extensions.ts lists them). */
  readonly extensions?: readonly KeygateExtension[];
}

@Module({})
export class AppModule {
  /** Rejects with a ConfigurationError when the configuration is invalid. */
  static async forRoot(options: AppModuleOptions = {}): Promise<DynamicModule> {
    const extensions = options.extensions ?? [];
    const { module: configModule, config } = await AppConfigModule.load(options);
    return {
      module: AppModule,
      imports: [
        configModule,
        LoggingModule.forRoot(options),
        ClockModule,
        RandomModule,
        EventsModule,
        MetricsModule,
        DatabaseModule.forRoot({ extensionMigrations: extensionMigrationsOf(extensions) }),
        UsersModule,
        TokensModule,
        AuthModule,
        PasswordsModule,
        AccountModule,
        TwoFactorRoutesModule,
        PasskeyRoutesModule,
        HealthModule,
        SessionsModule,
        AuditModule,
        EmailCodesModule,
        // Off by default: until Federation__Providers names a provider, its routes do not exist.
        ...(config.federation === null ? [] : [FederationModule, FederationAdminModule]),
        ...extensions.map((extension) => extension.module),
        AuditRetentionModule,
        KeyServingModule,
        WebhooksModule,
        WebhookSenderModule,
        AdminApiModule,
        // Off by default: then none of its routes exists, not even as a 404 of its own.
        ...(config.oauthServer === null ? [] : OAUTH_SERVER_MODULES),
      ],
      providers: [
        { provide: APP_PIPE, useClass: AppValidationPipe },
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
        // In this order: the session of a token is checked once the token is verified.
        { provide: APP_GUARD, useExisting: JwtAuthGuard },
        { provide: APP_GUARD, useExisting: ActiveSessionGuard },
      ],
    };
  }
}
