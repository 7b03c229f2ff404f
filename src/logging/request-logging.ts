import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { PinoLogger } from 'nestjs-pino';
import { requestLine, requestMessage } from './request-line.js';

export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * Per request: answers with the id Fastify assigned (see createHttpAdapter) and writes one line,
 * with that id, once the answer has gone out. Other lines of the request name it themselves
 * (see forRequest).
 *
 * Fastify hooks rather than nestjs-pino's pino-http middleware: they see every request, unknown
 * routes outside `/api` included, they know the route pattern, and they cost about a third of
 * its CPU per request (it made two child loggers and serialized the raw request each time).
 */
@Injectable()
export class RequestLogging implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly logger: PinoLogger,
  ) {}

  /** Before Fastify is ready, so the hooks apply to every route, whenever it was added. */
  onModuleInit(): void {
    // An application context (a command-line tool) has no HTTP server, and no requests.
    const { httpAdapter } = this.adapterHost;
    if (httpAdapter === undefined) {
      return;
    }
    const fastify = httpAdapter.getInstance<FastifyInstance>();
    const log = this.logger.logger;
    fastify.addHook('onRequest', (request, reply, done) => {
      void reply.header(REQUEST_ID_HEADER, request.id);
      // Node's 'close' comes once per answer, sent or abandoned, so a request whose client hung
      // up gets its line too.
      reply.raw.once('close', () => {
        log.info(requestLine(request, reply), requestMessage(reply));
      });
      done();
    });
  }
}
