import type { FastifyInstance } from 'fastify';
import { rememberRoute } from './request-line.js';

export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * Runs first for every request, unknown routes included: hands the client the id its log lines
 * carry (the one createHttpAdapter assigned), and keeps the route pattern for the request line.
 */
export function addRequestHooks(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    rememberRoute(request.raw, request.routeOptions.url);
    done();
  });
}
