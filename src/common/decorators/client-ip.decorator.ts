import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

export const UNKNOWN_CLIENT_IP = 'unknown';

/** Spec §4.2: the connection's remote address, or `unknown` when it is absent. */
export const ClientIp = createParamDecorator((_data: unknown, context: ExecutionContext): string => {
  const request = context.switchToHttp().getRequest<FastifyRequest>();
  const address = request.raw.socket?.remoteAddress;
  return address === undefined || address === '' ? UNKNOWN_CLIENT_IP : address;
});
