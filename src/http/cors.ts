import type { FastifyCorsOptions, FastifyCorsOptionsDelegateCallback } from '@fastify/cors';
import type { FastifyRequest } from 'fastify';
import { originMatcher, type AllowedOrigins } from '../config/settings/allowed-origins.js';
import { REFRESH_TOKEN_HEADER } from '../sessions/named-refresh-token.decorator.js';

/** What a front end sends: its bearer token, JSON, its own request id, and its refresh token. */
export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'X-Request-Id',
  REFRESH_TOKEN_HEADER,
] as const;

/** What a front end may read besides the safelisted headers: the request id, the 401 challenge. */
export const CORS_EXPOSED_HEADERS = ['X-Request-Id', 'WWW-Authenticate'] as const;

/**
 * How long a browser may reuse a preflight answer: two hours, Chromium's ceiling. The answer
 * only lists methods and headers; whether an origin is allowed is checked again on every real
 * answer, so a long cache never lets a removed origin read anything.
 */
export const CORS_MAX_AGE_SECONDS = 7_200;

/** The methods a preflight can be answered with; OPTIONS itself is the preflight. */
const ROUTE_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

const NOT_ALLOWED: FastifyCorsOptions = { origin: false };

/**
 * Per request, what @fastify/cors answers. A request from an origin that is not allowed, or a
 * preflight for a path no route serves, gets no CORS header at all (and a preflight then gets
 * what any OPTIONS request gets: a 405 or a 404). A preflight is answered with the methods of
 * the route it asks about. The allowed origin is echoed, never `*`: the answer names the one
 * front end it is for.
 */
export function corsOptionsFor(allowed: AllowedOrigins): FastifyCorsOptionsDelegateCallback {
  const isAllowed = originMatcher(allowed);
  return (request, callback) => {
    const { origin } = request.headers;
    if (origin === undefined || !isAllowed(origin)) {
      callback(null, NOT_ALLOWED);
    } else if (!isPreflight(request)) {
      callback(null, { origin, exposedHeaders: [...CORS_EXPOSED_HEADERS], preflight: false });
    } else {
      const methods = methodsServedAt(request);
      callback(
        null,
        methods.length === 0
          ? NOT_ALLOWED
          : {
              origin,
              methods,
              allowedHeaders: [...CORS_ALLOWED_HEADERS],
              maxAge: CORS_MAX_AGE_SECONDS,
            },
      );
    }
  };
}

/** Fetch standard: an OPTIONS request naming the method it prepares for. */
function isPreflight(request: FastifyRequest): boolean {
  return (
    request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined
  );
}

function methodsServedAt(request: FastifyRequest): string[] {
  const path = request.url.split('?', 1)[0] ?? '';
  return ROUTE_METHODS.filter((method) => request.server.findRoute({ method, url: path }) !== null);
}
