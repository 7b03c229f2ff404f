import type { IncomingMessage } from 'node:http';
import { Logger } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule } from '@nestjs/swagger';
import { ClientAddressResolver } from './common/network/client-address.js';
import { requestIdFrom } from './common/request-origin/request-origin.js';
import { buildOpenApiDocument } from './common/swagger/openapi-document.js';
import { AppConfig } from './config/app-config.js';
import { HEALTH_PATHS } from './health/health.controller.js';
import { configureHttpHeaders } from './http/http-headers.js';
import { HttpMetrics } from './metrics/http-metrics.js';

/** Largest accepted request body. Every valid body of this API is far smaller. */
export const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * The HTTP adapter. Only `application/json` bodies are parsed: Fastify's own JSON parser, which
 * refuses `__proto__` and `constructor.prototype` keys; any other body type is a 415. The app
 * must be created with `bodyParser: false` so Nest does not add parsers of its own.
 */
export function createHttpAdapter(): FastifyAdapter {
  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    genReqId: (request: IncomingMessage) => requestIdFrom(request.headers['x-request-id']),
  });
  adapter.getInstance().removeContentTypeParser('text/plain');
  return adapter;
}

/**
 * Everything main.ts and the tests share: prefix, headers, documentation, request timing,
 * start-up warnings.
 */
export function configureApp(app: NestFastifyApplication): NestFastifyApplication {
  const config = app.get(AppConfig);
  const logger = new Logger('Configuration');
  config.warnings.forEach((warning) => logger.warn(warning));

  const clientAddresses = new ClientAddressResolver(config.trustedProxies);
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRequest', (request, _reply, done) => {
      request.clientIp = clientAddresses.resolve(
        request.raw.socket?.remoteAddress,
        request.headers['x-forwarded-for'],
      );
      done();
    });
  app.get(HttpMetrics).attach(app.getHttpAdapter().getInstance());
  configureHttpHeaders(app, config);

  app.setGlobalPrefix('api', { exclude: HEALTH_PATHS });
  if (config.isDevelopment) {
    const document = buildOpenApiDocument(app);
    SwaggerModule.setup('/', app, document, { jsonDocumentUrl: 'openapi.json' });
  }
  return app;
}
