import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The line written once per request: a handful of flat fields, never the URL, headers or body.
 * Its request id comes from the request's logging context, like every other line of the request.
 */
export interface RequestLine {
  readonly method: string;
  /**
   * The route pattern that matched, absent when none did (a 404). Unlike the URL, it carries no
   * query string, where a token could sit.
   */
  readonly route: string | undefined;
  readonly statusCode: number;
  /** Milliseconds from the request's arrival to the answer's last byte, to 0.1 ms. */
  readonly responseTime: number;
}

export const REQUEST_LINE_MESSAGE = 'request completed';

export function requestLine(request: FastifyRequest, reply: FastifyReply): RequestLine {
  return {
    method: request.method,
    route: request.routeOptions.url,
    statusCode: reply.statusCode,
    responseTime: Math.round(reply.elapsedTime * 10) / 10,
  };
}
