import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

export const UNKNOWN_CLIENT_IP = 'unknown';

/** Spec §4.2: the connection's remote address, or `unknown` when it is absent. */
export function clientIpOf(remoteAddress: string | undefined): string {
  return remoteAddress === undefined || remoteAddress === '' ? UNKNOWN_CLIENT_IP : remoteAddress;
}

export const ClientIp = createParamDecorator((_data: unknown, context: ExecutionContext): string =>
  clientIpOf(context.switchToHttp().getRequest<FastifyRequest>().raw.socket?.remoteAddress),
);
