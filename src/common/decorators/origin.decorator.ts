import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { UNKNOWN_CLIENT_IP } from '../network/client-address.js';
import { userAgentFrom, type RequestOrigin } from '../request-origin/request-origin.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set for every request by the hook that configureApp installs. */
    clientIp?: string;
  }
}

/**
 * The request's origin: the client address as ClientAddressResolver worked it out, the user
 * agent, and the request id that createHttpAdapter assigned.
 */
export const Origin = createParamDecorator(
  (_data: unknown, context: ExecutionContext): RequestOrigin => {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    return {
      ip: request.clientIp ?? UNKNOWN_CLIENT_IP,
      userAgent: userAgentFrom(request.headers['user-agent']),
      requestId: request.id,
    };
  },
);
