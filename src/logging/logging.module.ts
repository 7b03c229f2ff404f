import { Module, type DynamicModule } from '@nestjs/common';
import type { DestinationStream } from 'pino';
import { LoggerModule } from 'nestjs-pino';
import { AppConfig } from '../config/app-config.js';
import { loggerParams } from './logger-params.js';
import { RequestLogging } from './request-logging.js';

export interface LoggingOptions {
  /** Where log lines go instead of stdout; tests read them from here. */
  readonly logDestination?: DestinationStream;
}

/**
 * pino through nestjs-pino, and a line per request (RequestLogging). Nest's Logger writes through
 * pino once the app calls `useLogger` with nestjs-pino's NativeLogger.
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
      providers: [RequestLogging],
    };
  }
}
