import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { allowsSomeOrigin } from '../config/settings/allowed-origins.js';
import type { AppConfig } from '../config/app-config.js';
import { corsOptionsFor } from './cors.js';
import { securityHeaders } from './security-headers.js';

/**
 * The headers every answer carries, errors and 404s included: CORS for the configured front ends,
 * no caching, and the security headers.
 */
export function configureHttpHeaders(app: NestFastifyApplication, config: AppConfig): void {
  const fastify = app.getHttpAdapter().getInstance();

  // The caching policy and the security headers, set first: an answer may replace them.
  fastify.addHook('onRequest', securityHeaders(config.hsts));

  if (allowsSomeOrigin(config.allowedOrigins)) {
    // @fastify/cors adds an `OPTIONS *` route before Nest installs its error handler, so a
    // failure there (the HTTP edge's 405 for a preflight it does not answer) would get Fastify's
    // own body: the route hands its failures to the handler in place when they happen.
    fastify.addHook('onRoute', (route) => {
      if (route.method === 'OPTIONS' && route.url.endsWith('*')) {
        route.errorHandler = (error, request, reply) =>
          request.server.errorHandler(error, request, reply);
      }
    });
    // In preParsing rather than onRequest: after the request has its id and its log line, so a
    // preflight gets both, and still before the body is read, so a 413 or 415 carries the CORS
    // headers and the page can read why it failed.
    app.enableCors({ delegator: corsOptionsFor(config.allowedOrigins), hook: 'preParsing' });
  }
}
