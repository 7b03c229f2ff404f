import { Injectable } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import { KeygateMetrics } from './keygate-metrics.js';

/** The route label of a request no route matched (a 404), whatever its URL. */
export const UNMATCHED_ROUTE = 'unmatched';

/** Times every answer of the public port. */
@Injectable()
export class HttpMetrics {
  constructor(private readonly metrics: KeygateMetrics) {}

  /**
   * Labels carry the route pattern (`/api/auth/login`), never the URL, so query strings, ids in
   * paths and scanners' probes cannot grow the series without bound.
   */
  attach(fastify: FastifyInstance): void {
    if (!this.metrics.enabled) {
      return;
    }
    const duration = this.metrics.httpRequestDuration;
    fastify.addHook('onResponse', (request, reply, done) => {
      duration.observe(
        {
          method: request.method,
          route: request.routeOptions.url ?? UNMATCHED_ROUTE,
          status_code: String(reply.statusCode),
        },
        reply.elapsedTime / 1_000,
      );
      done();
    });
  }
}
