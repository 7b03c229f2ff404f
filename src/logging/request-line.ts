import type { FastifyReply, FastifyRequest } from 'fastify';
import { REQUEST_ID_KEY } from './log-fields.js';

/** The line written once per request: a handful of flat fields, never the URL, headers or body. */
export interface RequestLine {
  readonly [REQUEST_ID_KEY]: string;
  readonly method: string;
  /**
   * The route pattern that matched, absent when none did (a 404). Unlike the URL, it carries no
   * query string, where a token could sit.
   */
  readonly route: string | undefined;
  /** Absent when the client went away before an answer was sent. */
  readonly statusCode: number | undefined;
  /** Milliseconds from the request's arrival to the answer's last byte, to 0.1 ms. */
  readonly responseTime: number;
}

export function requestLine(request: FastifyRequest, reply: FastifyReply): RequestLine {
  return {
    [REQUEST_ID_KEY]: request.id,
    method: request.method,
    route: request.routeOptions.url,
    statusCode: reply.raw.headersSent ? reply.statusCode : undefined,
    responseTime: Math.round(reply.elapsedTime * 10) / 10,
  };
}

/** `request aborted` when the connection closed before the whole answer went out. */
export function requestMessage(reply: FastifyReply): string {
  return reply.raw.writableFinished ? 'request completed' : 'request aborted';
}
