import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

/** The identity carried by a verified access token. */
export interface AccessTokenClaims {
  /** The user id. */
  readonly sub: string;
  /**
   * The session (refresh-token family) the token was issued for. Absent from tokens issued
   * before sessions were named in them.
   */
  readonly sid?: string;
  readonly email: string;
  readonly jti: string;
}

interface AuthenticatedRequest extends FastifyRequest {
  user?: AccessTokenClaims;
}

/** The claims of the request's verified access token. Only valid on protected routes. */
export const CurrentUser = createParamDecorator(
  (_data: unknown, context: ExecutionContext): AccessTokenClaims => {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    if (request.user === undefined) {
      // A handler marked @Public() asked for a user: a programming error, not a client error.
      throw new Error('@CurrentUser() used on a route without an authenticated user');
    }
    return request.user;
  },
);
