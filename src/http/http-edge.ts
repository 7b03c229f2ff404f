import { BadRequestException, MethodNotAllowedException } from '@nestjs/common';
import type {
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HTTPMethods,
} from 'fastify';
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { errorBodyAt, JSON_CONTENT_TYPE } from '../common/errors/error-bodies.js';
import { Clock } from '../common/time/clock.js';
import type { HttpConfig } from '../config/app-config.js';
import { enforceSendDeadline } from './send-deadline.js';

/**
 * Headers a request may carry once only. Node keeps the first of each and drops the others,
 * while a proxy in front may keep another one, so the two would disagree about where the request
 * goes, who sends it or how its body reads. RFC 9112 §3.2 requires a 400 for a second Host.
 */
const SINGLE_HEADERS = new Set(['host', 'authorization', 'content-type', 'content-length']);

/** The clock of each server's answers, for the handler Fastify takes before the app exists. */
const clocks = new WeakMap<FastifyInstance, Clock>();

/** The methods a 405 may list in its `Allow` header. */
const METHODS: readonly HTTPMethods[] = [
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
];

/** Node's parser errors that have their own status; any other one is a malformed request. */
const PARSER_ERROR_STATUS: Readonly<Record<string, number>> = {
  ERR_HTTP_REQUEST_TIMEOUT: 408,
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
};

/**
 * The answers Node's HTTP layer gives before a request reaches Fastify, made to carry the error
 * body of SPEC §2.4 with a JSON content type (Node's own have no body, Fastify's its own shape),
 * and the request checks that belong before routing:
 *
 * - a request (headers and body) must arrive within `requestTimeoutMs`, or it is answered 408
 *   and its connection closed; a malformed request line or header is a 400, headers too large a
 *   431, both also closing the connection;
 * - an answer, once started, must go out within `responseTimeoutMs`, or its connection is
 *   closed (see enforceSendDeadline);
 * - a repeated single header (see SINGLE_HEADERS), or an HTTP/1.1 request without Host, is 400;
 * - a path that exists for other methods is 405 with `Allow`, instead of 404;
 * - an `Expect` other than `100-continue` is 417.
 *
 * Call before the server listens: Node reads the checking interval when it starts listening.
 */
export function installHttpEdge(fastify: FastifyInstance, clock: Clock, config: HttpConfig): void {
  // Both are options of http.createServer that Node reads from the server when it needs them;
  // its typings only list them as options.
  const server = fastify.server as Server & {
    connectionsCheckingInterval: number;
    requireHostHeader: boolean;
  };
  server.requestTimeout = config.requestTimeoutMs;
  server.headersTimeout = Math.min(server.headersTimeout, config.requestTimeoutMs);
  // Node looks for late requests every 30 s by default, which could double the deadline.
  server.connectionsCheckingInterval = checkingIntervalOf(config.requestTimeoutMs);
  // Checked below with the other header rules, so that the 400 carries the error body.
  server.requireHostHeader = false;
  enforceSendDeadline(
    server,
    config.responseTimeoutMs,
    checkingIntervalOf(config.responseTimeoutMs),
  );

  const errorResponse = (status: number): string => JSON.stringify(errorOf(status, clock));
  server.removeAllListeners('clientError');
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) =>
    answerClientError(error, socket, errorResponse),
  );
  server.on('checkExpectation', (_request: IncomingMessage, response: ServerResponse) => {
    writeError(response, 417, errorResponse(417));
  });

  clocks.set(fastify, clock);
  // After the onRequest hooks, so these answers get their request id and request line too.
  fastify.addHook('preParsing', (request, reply, _payload, done) => {
    if (!hasWellFormedHeaders(request.raw)) {
      // Which request the next bytes belong to is in doubt too: end the connection.
      void reply.header('connection', 'close');
      done(new BadRequestException());
      return;
    }
    if (!namesResource(request.routeOptions.url)) {
      const allowed = allowedMethods(fastify, request);
      if (allowed.length > 0) {
        void reply.header('allow', allowed.join(', '));
        done(new MethodNotAllowedException());
        return;
      }
    }
    done();
  });
}

/** How often a deadline is checked: a tenth of it, from 0.1 s to 1 s. */
function checkingIntervalOf(deadlineMs: number): number {
  return Math.min(1_000, Math.max(100, Math.floor(deadlineMs / 10)));
}

/**
 * Fastify's `frameworkErrors`: a path it cannot decode (400) or with a parameter too long
 * (414). Its own answer would echo the path; this one is the error body.
 */
export function answerFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const status = error.statusCode !== undefined && error.statusCode < 500 ? error.statusCode : 400;
  const clock = clocks.get(request.server) ?? new Clock();
  void reply.status(status).header('content-type', JSON_CONTENT_TYPE).send(errorOf(status, clock));
}

function errorOf(status: number, clock: Clock) {
  return errorBodyAt(status, STATUS_CODES[status] ?? 'Error', clock.now());
}

/**
 * Node's 'clientError': the request could not be read. Answered like Node does (only if nothing
 * was sent yet on the connection, then the connection is closed), with the error body.
 */
function answerClientError(
  error: NodeJS.ErrnoException,
  socket: Socket,
  errorResponse: (status: number) => string,
): void {
  if (socket.destroyed) {
    return;
  }
  if (error.code === 'ECONNRESET' || error.code === 'HPE_INVALID_EOF_STATE') {
    // The client hung up mid-request: no one is left to read an answer.
    socket.destroy();
    return;
  }
  const status = PARSER_ERROR_STATUS[error.code ?? ''] ?? 400;
  // A request whose body stalled has been handed to Fastify: its response object is waiting.
  const inFlight = (socket as { _httpMessage?: ServerResponse | null })._httpMessage ?? null;
  if (inFlight !== null) {
    if (!inFlight.headersSent) {
      writeError(inFlight, status, errorResponse(status));
    }
    socket.destroySoon();
    return;
  }
  const body = errorResponse(status);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        `Content-Type: ${JSON_CONTENT_TYPE}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy();
}

function writeError(response: ServerResponse, status: number, body: string): void {
  response.writeHead(status, {
    'content-type': JSON_CONTENT_TYPE,
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  });
  response.end(body);
}

function hasWellFormedHeaders(request: IncomingMessage): boolean {
  const seen = new Set<string>();
  const { rawHeaders } = request;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i].toLowerCase();
    if (SINGLE_HEADERS.has(name)) {
      if (seen.has(name)) {
        return false;
      }
      seen.add(name);
    }
  }
  // RFC 9112 §3.2: an HTTP/1.1 request must name its host.
  return seen.has('host') || request.httpVersion !== '1.1';
}

/**
 * False for no route, and for a catch-all (`/*`: the development Swagger UI's static files),
 * which answers 404 for any path that is not one of its files rather than naming a resource.
 */
function namesResource(routeUrl: string | undefined): boolean {
  return routeUrl !== undefined && !routeUrl.endsWith('*');
}

/** The methods that have a route of their own, not only a catch-all, at this request's path. */
function allowedMethods(fastify: FastifyInstance, request: FastifyRequest): HTTPMethods[] {
  const path = request.url.split('?', 1)[0];
  return METHODS.filter((method) => {
    if (method === request.method) {
      return false;
    }
    const route = fastify.findRoute({ method, url: path });
    return route !== null && !('*' in route.params);
  });
}
