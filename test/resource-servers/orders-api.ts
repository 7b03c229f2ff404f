import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import {
  AccessTokenError,
  challenge,
  IssuerUnavailableError,
  protectedResourceMetadata,
  protectedResourceMetadataUrl,
  verifyAccessToken,
  type AccessTokenClaims,
} from '../../packages/resource/src/index.js';

export interface OrdersApiSettings {
  /** Keygate, exactly as its tokens' `iss`: `https://id.example.com`. */
  readonly issuer: string;
  /** This API, as clients name it and as Keygate's OAuth server lists it. */
  readonly resource: string;
}

/** The token of `Authorization: Bearer <token>` (RFC 6750 §2.1); undefined without one. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return /^Bearer +([A-Za-z0-9._~+/-]+=*)$/i.exec(authorization ?? '')?.[1];
}

export function ordersApi({ issuer, resource }: OrdersApiSettings): FastifyInstance {
  const app = Fastify();
  const resourceMetadataUrl = protectedResourceMetadataUrl(resource);
  const claimsOf = new WeakMap<FastifyRequest, AccessTokenClaims>();

  /** A preHandler: the request goes on only with a token for this API holding these scopes. */
  const requireScopes =
    (...requiredScopes: string[]) =>
    async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      const token = bearerToken(request.headers.authorization);
      if (token === undefined) {
        const value = challenge({ resourceMetadataUrl, scope: requiredScopes });
        return void reply.code(401).header('WWW-Authenticate', value).send();
      }
      try {
        claimsOf.set(request, await verifyAccessToken(token, { issuer, resource, requiredScopes }));
      } catch (error) {
        if (error instanceof IssuerUnavailableError) {
          request.log.error(error, 'Keygate unreachable: cannot verify tokens');
          return void reply.code(503).header('Retry-After', '30').send();
        }
        if (!(error instanceof AccessTokenError)) {
          throw error;
        }
        request.log.info({ reason: error.reason }, error.message);
        const value = challenge({
          resourceMetadataUrl,
          error: error.code,
          scope: error.code === 'insufficient_scope' ? error.requiredScopes : undefined,
        });
        return void reply.code(error.status).header('WWW-Authenticate', value).send();
      }
    };

  app.get(new URL(resourceMetadataUrl).pathname, () =>
    protectedResourceMetadata({
      issuer,
      resource,
      scopesSupported: ['orders:read', 'orders:write'],
    }),
  );
  app.get('/orders', { preHandler: requireScopes('orders:read') }, (request) => ({
    customer: claimsOf.get(request)?.sub,
    orders: [],
  }));
  app.post('/orders', { preHandler: requireScopes('orders:write') }, async (request, reply) =>
    reply.code(201).send({ customer: claimsOf.get(request)?.sub, created: true }),
  );
  return app;
}
