import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parse } from 'node:querystring';
import { UNKNOWN_CLIENT_IP } from '../../common/network/client-address.js';
import { userAgentFrom, type RequestOrigin } from '../../common/request-origin/request-origin.js';
import {
  InteractionPagesService,
  type FormFields,
  type PageAnswer,
} from '../pages/interaction-pages.service.js';
import { requestOrigins } from '../events/request-origins.js';
import { pagePolicy, PASSKEY_SCRIPT_PATH } from '../pages/page-templates.js';
import { INTERACTION_PATH } from './provider-configuration.js';
import { ProviderHost } from './provider-host.js';

/** The discovery document's addresses: RFC 8414's is served with the same content as OIDC's. */
export const DISCOVERY_PATHS = [
  '/.well-known/openid-configuration',
  '/.well-known/oauth-authorization-server',
] as const;

const OIDC_DISCOVERY = DISCOVERY_PATHS[0];

/** A hosted form is a few short fields. */
const FORM_LIMIT_BYTES = 8 * 1024;

/**
 * What every answer of the provider carries: nothing of it may be framed (its pages hold forms)
 * or sniffed. The library writes its own answers (hijacked replies skip Fastify's hooks).
 */
const PROVIDER_HEADERS = {
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'content-security-policy': "frame-ancestors 'none'",
} as const;

/**
 * Hands the provider's requests to the protocol library, a Koa application: `/oauth/*` and the
 * discovery documents; and serves Keygate's hosted pages under `/oauth/interaction/`. The routes
 * sit in a Fastify scope of their own, where no JSON parser runs: the library reads the body
 * itself (a body Fastify had read first would be gone), and the hosted forms are
 * `application/x-www-form-urlencoded`. The library's replies are hijacked, so it writes the
 * answer (its own headers, the error bodies of OAuth, RFC 6749 §5.2).
 */
@Injectable()
export class ProviderMount implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly host: ProviderHost,
    private readonly pages: InteractionPagesService,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    const handle = (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      if (request.url.startsWith(DISCOVERY_PATHS[1])) {
        request.raw.url = OIDC_DISCOVERY + request.url.slice(DISCOVERY_PATHS[1].length);
      }
      requestOrigins.set(request.raw, originOf(request));
      // Before the hijack: should it throw, Fastify still answers (a 500).
      const provider = this.host.current();
      reply.hijack();
      for (const [name, value] of Object.entries(PROVIDER_HEADERS)) {
        reply.raw.setHeader(name, value);
      }
      return provider.callback()(request.raw, reply.raw);
    };
    void fastify.register((scope: FastifyInstance, _options: unknown, done: () => void) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', (_request, _payload, parsed) => parsed(null));
      for (const url of DISCOVERY_PATHS) {
        scope.route({ method: ['GET', 'OPTIONS'], url, handler: handle });
      }
      scope.route({ method: ['GET', 'POST', 'OPTIONS'], url: '/oauth/*', handler: handle });
      void scope.register(this.interactionRoutes());
      done();
    });
  }

  /** The hosted pages: thin handlers, the rules in InteractionPagesService. */
  private interactionRoutes() {
    return (scope: FastifyInstance, _options: unknown, done: () => void): void => {
      scope.addContentTypeParser(
        'application/x-www-form-urlencoded',
        { parseAs: 'string', bodyLimit: FORM_LIMIT_BYTES },
        (_request, body, parsed) => parsed(null, parse(String(body))),
      );
      scope.get(`${INTERACTION_PATH}/:uid`, async (request, reply) =>
        send(reply, await this.pages.show(request.raw, reply.raw)),
      );
      scope.post(`${INTERACTION_PATH}/:uid/login`, async (request, reply) =>
        send(
          reply,
          await this.pages.signIn(request.raw, reply.raw, formOf(request), originOf(request)),
        ),
      );
      scope.post(`${INTERACTION_PATH}/:uid/email-code/send`, async (request, reply) =>
        send(
          reply,
          await this.pages.sendEmailCode(
            request.raw,
            reply.raw,
            formOf(request),
            originOf(request),
          ),
        ),
      );
      scope.post(`${INTERACTION_PATH}/:uid/email-code`, async (request, reply) =>
        send(
          reply,
          await this.pages.emailCodeSignIn(
            request.raw,
            reply.raw,
            formOf(request),
            originOf(request),
          ),
        ),
      );
      scope.post(`${INTERACTION_PATH}/:uid/passkey`, async (request, reply) =>
        send(
          reply,
          await this.pages.passkeySignIn(
            request.raw,
            reply.raw,
            formOf(request),
            originOf(request),
          ),
        ),
      );
      scope.get(PASSKEY_SCRIPT_PATH, (_request, reply) =>
        reply
          .headers({
            'content-type': 'text/javascript; charset=utf-8',
            'x-content-type-options': 'nosniff',
            'cache-control': 'no-cache',
          })
          .send(this.pages.passkeyScript()),
      );
      scope.post(`${INTERACTION_PATH}/:uid/consent`, async (request, reply) =>
        send(
          reply,
          await this.pages.consent(request.raw, reply.raw, formOf(request), originOf(request)),
        ),
      );
      done();
    };
  }
}

function formOf(request: FastifyRequest): FormFields {
  const body = request.body;
  return typeof body === 'object' && body !== null ? (body as FormFields) : {};
}

function originOf(request: FastifyRequest): RequestOrigin {
  return {
    ip: request.clientIp ?? UNKNOWN_CLIENT_IP,
    userAgent: userAgentFrom(request.headers['user-agent']),
    requestId: request.id,
  };
}

function send(reply: FastifyReply, answer: PageAnswer): FastifyReply {
  if (answer.kind === 'redirect') {
    return reply.redirect(answer.location, 303);
  }
  return reply
    .status(answer.status)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': pagePolicy(answer.formTargets, answer.withScript === true),
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      // A page holds its form's token (and a mailed code's second step, that code): never kept.
      'cache-control': 'no-store',
    })
    .send(answer.html);
}
