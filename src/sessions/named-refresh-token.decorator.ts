import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

/**
 * The header in which a client names its current refresh token when it lists its sessions. A
 * header, never a query parameter: query strings end up in access logs.
 */
export const REFRESH_TOKEN_HEADER = 'X-Refresh-Token';

/** The refresh token named in X-Refresh-Token, or null when the request names none. */
export const NamedRefreshToken = createParamDecorator(
  (_data: unknown, context: ExecutionContext): string | null => {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const value = request.headers[REFRESH_TOKEN_HEADER.toLowerCase()];
    return typeof value === 'string' && value !== '' ? value : null;
  },
);
