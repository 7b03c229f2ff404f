import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { UNKNOWN_CLIENT_IP } from '../network/client-address.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set for every request by the hook that configureApp installs. */
    clientIp?: string;
  }
}

/** The client's address as ClientAddressResolver worked it out for this request. */
export const ClientIp = createParamDecorator(
  (_data: unknown, context: ExecutionContext): string =>
    context.switchToHttp().getRequest<FastifyRequest>().clientIp ?? UNKNOWN_CLIENT_IP,
);
