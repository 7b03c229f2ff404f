import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PinoLogger } from 'nestjs-pino';
import { requestLine, requestMessage } from './request-line.js';
import { RequestLineWriter } from './request-line-writer.js';

export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * Per request: answers with the id Fastify assigned (see createHttpAdapter) and writes one line,
 * with that id, once the answer has gone out. Other lines of the request name it themselves
 * (see forRequest).
 *
 * Fastify hooks rather than nestjs-pino's pino-http middleware: they see every request, unknown
 * routes outside `/api` included, they know the route pattern, and they cost about a third of
 * its CPU per request (it made two child loggers and serialized the raw request each time).
 * The line itself is built by RequestLineWriter, the same bytes as pino's, when it can be.
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
    const writer = RequestLineWriter.forLogger(log);
    const writeLine =
      writer === undefined
        ? (request: FastifyRequest, reply: FastifyReply) =>
            log.info(requestLine(request, reply), requestMessage(reply))
        : (request: FastifyRequest, reply: FastifyReply) =>
            writer.write(requestLine(request, reply), requestMessage(reply));
    fastify.addHook('onRequest', (request, reply, done) => {
      void reply.header(REQUEST_ID_HEADER, request.id);
      // Node's 'close' comes once per answer, sent or abandoned, so a request whose client hung
      // up gets its line too.
      reply.raw.once('close', () => {
        writeLine(request, reply);
      });
      done();
    });
  }
}
