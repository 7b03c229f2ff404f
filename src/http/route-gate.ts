import type { FastifyInstance } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Whether the routes under a gate's prefix exist for this request. */
export type RoutesShown = (request: IncomingMessage) => Promise<boolean>;

type RequestHandler = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * Routes a request whose path starts with `prefix` only when `shown` says its routes exist;
 * otherwise the request is routed as the path `prefix` without its last slash, which names no
 * route, so that it gets, byte for byte, what any unknown path gets: the 404 of every method and
 * content type, without a 405 and its `Allow`, a 415, a 400 for its body, a 414 for a long
 * parameter, or a CORS preflight listing the methods there. Being decided before routing, not
 * in a hook or guard of the routes, no later layer can tell the difference.
 *
 * Returns the gated handler; `install` puts it in the place of Fastify's own on the server
 * Fastify listens with. A `shown` that fails counts as hidden: the routes show nothing of
 * themselves while their state cannot be read.
 */
export function gateRoutesUnder(
  fastify: FastifyInstance,
  prefix: string,
  shown: RoutesShown,
  { install }: { readonly install: boolean },
): RequestHandler {
  // Fastify's own request listener (its `routing`), which uses no `this`: node:http calls it bare.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const route: RequestHandler = fastify.routing;
  const hiddenPath = prefix.replace(/\/$/, '');
  const gated: RequestHandler = (request, response) => {
    if (!underPrefix(request.url ?? '', prefix)) {
      route(request, response);
      return;
    }
    shown(request).then(
      (isShown) => routeAs(isShown),
      () => routeAs(false),
    );
    function routeAs(isShown: boolean): void {
      if (!isShown) {
        request.url = hiddenPath;
      }
      route(request, response);
    }
  };
  if (install) {
    // Fastify's handler is the server's `request` listener (node:http's createServer); the
    // gated one takes its place, first, as it was.
    fastify.server.removeListener('request', route);
    fastify.server.prependListener('request', gated);
  }
  return gated;
}

/**
 * Whether the path, as written or with its percent-encoded ASCII decoded (the router decodes it
 * before matching), starts with `prefix`. A path that decodes to one under `prefix` without
 * being routed there is an unknown path either way, so taking it for one changes nothing.
 */
export function underPrefix(url: string, prefix: string): boolean {
  const path = url.split('?', 1)[0] ?? '';
  return (
    path.startsWith(prefix) ||
    (path.includes('%') &&
      path
        .replace(/%([0-7][0-9a-f])/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
        .startsWith(prefix))
  );
}
