import type { DestinationStream } from 'pino';
import { pinoHttp, type Options } from 'pino-http';
import { AppConfig, type LoggingConfig } from '../../src/config/app-config.js';
import { loggerParams } from '../../src/logging/logger-params.js';

/** The service's root logger, as nestjs-pino builds it from loggerParams, writing into `lines`. */
export async function serviceLogger(
  isDevelopment: boolean,
  level: LoggingConfig['level'] = 'info',
) {
  const lines: string[] = [];
  const config = Object.assign(new AppConfig(), { isDevelopment, logging: { level } });
  const { pinoHttp: params } = await loggerParams(config, {
    write: (line: string) => lines.push(line),
  });
  const [options, stream] = params as [Options, DestinationStream];
  return { logger: pinoHttp(options, stream).logger, lines };
}
