import type { IncomingMessage, ServerResponse } from 'node:http';

const ROUTE = Symbol('keygate.route');

interface RoutedRequest extends IncomingMessage {
  [ROUTE]?: string;
}

/** What a request line says about the request: never the raw URL, headers or body. */
export interface RequestSummary {
  readonly method: string | undefined;
  /** The route pattern that matched; absent when none did (a 404). */
  readonly route: string | undefined;
}

export interface ResponseSummary {
  readonly statusCode: number;
}

/**
 * pino-http only sees Node's request, which has the URL but not the route that matched it, so
 * the pattern is put on it once Fastify has routed the request (see addRequestHooks).
 */
export function rememberRoute(req: IncomingMessage, route: string | undefined): void {
  (req as RoutedRequest)[ROUTE] = route;
}

/** The `req` serializer: two fields, because it runs for every request. */
export function summarizeRequest(req: IncomingMessage): RequestSummary {
  return { method: req.method, route: (req as RoutedRequest)[ROUTE] };
}

/** The `res` serializer. Response headers stay out: they would carry set-cookie. */
export function summarizeResponse(res: ServerResponse): ResponseSummary {
  return { statusCode: res.statusCode };
}
