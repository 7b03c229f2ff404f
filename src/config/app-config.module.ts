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
    return (await AppConfigModule.load(options)).module;
  }

  /** forRoot, and the configuration it loaded: the root module mounts what it turns on. */
  static async load(
    options: AppConfigOptions = {},
  ): Promise<{ readonly module: DynamicModule; readonly config: AppConfig }> {
    const { environment, overrides } = options;
    let loaded: AppConfig | undefined;
    const module: DynamicModule = {
      module: AppConfigModule,
      imports: [
        await ConfigModule.forRoot({
          ignoreEnvFile: environment !== undefined,
          validatePredefined: environment === undefined,
          skipProcessEnv: true,
          validate: (raw) => {
            loaded = loadAppConfig({ ...raw, ...environment, ...overrides });
            return { [APP_CONFIG_KEY]: loaded };
          },
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
    if (loaded === undefined) {
      throw new Error('The configuration was not loaded');
    }
    return { module, config: loaded };
  }
}
