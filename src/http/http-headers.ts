import fastifyHelmet from '@fastify/helmet';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { allowsSomeOrigin } from '../config/allowed-origins.js';
import type { AppConfig } from '../config/app-config.js';
import { corsOptionsFor } from './cors.js';
import {
  DOCUMENTATION_PAGES,
  DOCUMENTATION_SECURITY_HEADERS,
  securityHeaderOptions,
} from './security-headers.js';

/**
 * The headers every answer carries, errors and 404s included: CORS for the configured front ends,
 * no caching, and the security headers. Call it before the Swagger UI is set up, so that its
 * pages get their own policy.
 */
export function configureHttpHeaders(app: NestFastifyApplication, config: AppConfig): void {
  const fastify = app.getHttpAdapter().getInstance();

  // RFC 6749 §5.1 requires it of answers that carry tokens; no answer of an identity service is
  // worth keeping in a shared cache or in the browser's. `Pragma` is for HTTP/1.0 caches. An
  // answer that chose its own policy keeps it (the health probes' is stricter still).
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (!reply.hasHeader('cache-control')) {
      void reply.header('cache-control', 'no-store');
    }
    if (!reply.hasHeader('pragma')) {
      void reply.header('pragma', 'no-cache');
    }
    done(null, payload);
  });

  fastify.addHook('onRoute', (route) => {
    if (DOCUMENTATION_PAGES.has(route.url)) {
      route.config = { ...route.config, helmet: DOCUMENTATION_SECURITY_HEADERS };
    }
  });
  void app.register(fastifyHelmet, securityHeaderOptions(config.hsts));

  if (allowsSomeOrigin(config.allowedOrigins)) {
    // In preParsing rather than onRequest: after the request has its id and its log line, so a
    // preflight gets both, and still before the body is read, so a 413 or 415 carries the CORS
    // headers and the page can read why it failed.
    app.enableCors({ delegator: corsOptionsFor(config.allowedOrigins), hook: 'preParsing' });
  }
}
