import {
  Injectable,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import type { AccessTokenClaims } from '../common/decorators/current-user.decorator.js';
import { ADMIN_SCOPE_KEY } from '../common/admin-route/admin-scope.js';
import { IS_PUBLIC_KEY } from '../common/decorators/public.decorator.js';
import { AppConfig } from '../config/app-config.js';
import { SessionsService } from './sessions.service.js';

/**
 * Global guard after the bearer-token guard, on only with Jwt__RequireActiveSession: a protected
 * route refuses an access token whose session (`sid`) has ended, at once rather than when the
 * token expires, at the cost of one indexed read per request. The refusal is the bearer guard's
 * own bare 401: to the client the token is no longer valid. A token without `sid` (issued before
 * sessions were named in tokens) cannot be checked, so it is refused too: its client refreshes.
 */
@Injectable()
export class ActiveSessionGuard implements CanActivate {
  private readonly isRequired: boolean;

  constructor(
    private readonly reflector: Reflector,
    private readonly sessions: SessionsService,
    config: AppConfig,
  ) {
    this.isRequired = config.jwt.requireActiveSession;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!this.isRequired || this.isPublic(context)) {
      return true;
    }
    const { user } = context
      .switchToHttp()
      .getRequest<FastifyRequest & { user?: AccessTokenClaims }>();
    if (user?.sid === undefined || !(await this.sessions.isActive(user.sub, user.sid))) {
      throw new UnauthorizedException();
    }
    return true;
  }

  /** Public routes, and admin API routes (whose caller is a key, not an account's session). */
  private isPublic(context: ExecutionContext): boolean {
    const targets = [context.getHandler(), context.getClass()];
    return (
      this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC_KEY, targets) === true ||
      this.reflector.getAllAndOverride<string | undefined>(ADMIN_SCOPE_KEY, targets) !== undefined
    );
  }
}
