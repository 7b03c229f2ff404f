import { Global, Module, type DynamicModule } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { APP_CONFIG_KEY, AppConfig, loadAppConfig } from './app-config.js';

export interface AppConfigOptions {
  /**
   * When given, the configuration is read from this record alone: no `.env` file and no
   * process environment. Tests use it to boot isolated instances side by side.
   */
  readonly environment?: Readonly<Record<string, string>>;
  /** Keys that win over the environment and `.env`: the admin CLI turns the cleanup timer off. */
  readonly overrides?: Readonly<Record<string, string>>;
}

@Global()
@Module({})
export class AppConfigModule {
  /**
   * Loads and validates the configuration now, so that an invalid one fails here, before Nest
   * starts, with one ConfigurationError.
   */
  static async forRoot(options: AppConfigOptions = {}): Promise<DynamicModule> {
    const { environment, overrides } = options;
    return {
      module: AppConfigModule,
      imports: [
        await ConfigModule.forRoot({
          ignoreEnvFile: environment !== undefined,
          validatePredefined: environment === undefined,
          skipProcessEnv: true,
          validate: (raw) => ({
            [APP_CONFIG_KEY]: loadAppConfig({ ...raw, ...environment, ...overrides }),
          }),
        }),
      ],
      providers: [
        {
          provide: AppConfig,
          inject: [ConfigService],
          useFactory: (config: ConfigService): AppConfig =>
            config.getOrThrow<AppConfig>(APP_CONFIG_KEY),
        },
      ],
      exports: [AppConfig],
    };
  }
}
