import type { IncomingMessage } from 'node:http';
import { Logger } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { ACCOUNT_REFUSALS } from './auth/jwt-auth.guard.js';
import { ClientAddressResolver } from './common/network/client-address.js';
import { RandomSource } from './common/random/random-source.js';
import { Clock } from './common/time/clock.js';
import { requestIdFrom } from './common/request-origin/request-origin.js';
import { ADMIN_API_MODULES } from './admin/http/admin-api.module.js';
import { buildOpenApiDocument, INTERFACE_VARIANT } from './common/swagger/openapi-document.js';
import { AppConfig } from './config/app-config.js';
import { HEALTH_PATHS } from './health/health.controller.js';
import { answerFrameworkError, installHttpEdge } from './http/http-edge.js';
import { configureHttpHeaders } from './http/http-headers.js';
import { useStrictJsonBodies } from './http/json-body-parser.js';
import { HttpMetrics } from './metrics/http-metrics.js';
import { KEYS_PATHS } from './keys/jwks.controller.js';

/** Largest accepted request body. Every valid body of this API is far smaller. */
export const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * The HTTP adapter. Only `application/json` bodies are parsed, strictly (useStrictJsonBodies);
 * any other body type is a 415. The app must be created with `bodyParser: false` so Nest does
 * not add parsers of its own. `random` makes the ids of requests that bring none (the adapter
 * exists before the application, so it is handed in rather than injected).
 */
export function createHttpAdapter(random: RandomSource = new RandomSource()): FastifyAdapter {
  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    genReqId: (request: IncomingMessage) => requestIdFrom(request.headers['x-request-id'], random),
    frameworkErrors: answerFrameworkError,
  });
  adapter.getInstance().removeContentTypeParser('text/plain');
  useStrictJsonBodies(adapter.getInstance());
  return adapter;
}

/**
 * The API document of the app, with what the global guard answers on every protected route. The
 * admin API has a document of its own (admin-openapi.json), so a client of the interface never
 * sees it.
 */
export function openApiDocumentOf(app: NestFastifyApplication): OpenAPIObject {
  return buildOpenApiDocument(app, ACCOUNT_REFUSALS, {
    ...INTERFACE_VARIANT,
    excludeModules: ADMIN_API_MODULES,
  });
}

/**
 * Everything main.ts and the tests share: prefix, documentation, request timing, the headers
 * and the answers of the HTTP layer, start-up warnings. Call before listening.
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
  // Headers first: a preflight is answered (CORS) before the edge would call its method a 405.
  configureHttpHeaders(app, config);
  installHttpEdge(app.getHttpAdapter().getInstance(), app.get(Clock), config.http);

  app.setGlobalPrefix('api', { exclude: [...HEALTH_PATHS, ...KEYS_PATHS] });
  if (config.isDevelopment) {
    const document = openApiDocumentOf(app);
    SwaggerModule.setup('/', app, document, { jsonDocumentUrl: 'openapi.json' });
  }
  return app;
}
