import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ProviderHost } from './provider-host.js';

/** The discovery document's addresses: RFC 8414's is served with the same content as OIDC's. */
export const DISCOVERY_PATHS = [
  '/.well-known/openid-configuration',
  '/.well-known/oauth-authorization-server',
] as const;

const OIDC_DISCOVERY = DISCOVERY_PATHS[0];

/**
 * Hands the provider's requests to the protocol library, a Koa application: `/oauth/*` (besides
 * the hosted pages, routes of their own) and the discovery documents. The routes sit in a Fastify
 * scope of their own, where no body parser runs: the library reads the body itself, and a body
 * Fastify had read first would be gone. The reply is hijacked, so the library writes the answer
 * (its own headers, its own error bodies: those of OAuth, RFC 6749 §5.2).
 */
@Injectable()
export class ProviderMount implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly host: ProviderHost,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    const handle = (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      if (request.url.startsWith(DISCOVERY_PATHS[1])) {
        request.raw.url = OIDC_DISCOVERY + request.url.slice(DISCOVERY_PATHS[1].length);
      }
      reply.hijack();
      return this.host.current().callback()(request.raw, reply.raw);
    };
    void fastify.register((scope: FastifyInstance, _options: unknown, done: () => void) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', (_request, _payload, parsed) => parsed(null));
      for (const url of DISCOVERY_PATHS) {
        scope.route({ method: ['GET', 'OPTIONS'], url, handler: handle });
      }
      scope.route({ method: ['GET', 'POST', 'OPTIONS'], url: '/oauth/*', handler: handle });
      done();
    });
  }
}
