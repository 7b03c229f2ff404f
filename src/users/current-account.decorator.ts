import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { AccountState } from './user.repository.js';

/** A request whose bearer's account the global guard has read (see JwtAuthGuard). */
export interface RequestWithAccount extends FastifyRequest {
  account?: AccountState;
}

/**
 * The existing, active account of the request's verified access token, as the guard read it for
 * this request, so a handler needs no second read. Only valid on protected routes.
 */
export const CurrentAccount = createParamDecorator(
  (_data: unknown, context: ExecutionContext): AccountState => {
    const request = context.switchToHttp().getRequest<RequestWithAccount>();
    if (request.account === undefined) {
      // A handler marked @Public() asked for an account: a programming error, not a client error.
      throw new Error('@CurrentAccount() used on a route without an authenticated user');
    }
    return request.account;
  },
);
