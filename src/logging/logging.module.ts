import { Module, type DynamicModule } from '@nestjs/common';
import type { DestinationStream } from 'pino';
import { LoggerModule } from 'nestjs-pino';
import { AppConfig } from '../config/app-config.js';
import { loggerParams } from './logger-params.js';

export interface LoggingOptions {
  /** Where log lines go instead of stdout; tests read them from here. */
  readonly logDestination?: DestinationStream;
}

/**
 * pino through nestjs-pino: a line per request, and the request's id on every line logged while
 * it runs. Nest's Logger writes through pino once the app calls `useLogger` with NativeLogger.
 */
@Module({})
export class LoggingModule {
  static forRoot(options: LoggingOptions = {}): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) => loggerParams(config, options.logDestination),
        }),
      ],
    };
  }
}
