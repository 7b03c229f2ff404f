import { Global, Module, type DynamicModule } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { APP_CONFIG_KEY, AppConfig, loadAppConfig } from './app-config.js';

export interface AppConfigOptions {
  /**
   * When given, the configuration is read from this record alone: no `.env` file and no
   * process environment. Tests use it to boot isolated instances side by side.
   */
  readonly environment?: Readonly<Record<string, string>>;
}

@Global()
@Module({})
export class AppConfigModule {
  static forRoot(options: AppConfigOptions = {}): DynamicModule {
    const { environment } = options;
    return {
      module: AppConfigModule,
      imports: [
        ConfigModule.forRoot({
          ignoreEnvFile: environment !== undefined,
          validatePredefined: environment === undefined,
          skipProcessEnv: true,
          validate: (raw) => ({ [APP_CONFIG_KEY]: loadAppConfig({ ...raw, ...environment }) }),
        }),
      ],
      providers: [
        {
          provide: AppConfig,
          inject: [ConfigService],
          useFactory: (config: ConfigService): AppConfig => config.getOrThrow<AppConfig>(APP_CONFIG_KEY),
        },
      ],
      exports: [AppConfig],
    };
  }
}
