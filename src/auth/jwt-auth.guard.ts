import { Injectable, UnauthorizedException, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { IS_PUBLIC_KEY } from '../common/decorators/public.decorator.js';

/**
 * Global guard: every route needs a valid bearer token unless it is marked @Public(), so a
 * forgotten decorator fails closed. Every failure is the same bare 401.
 */
@Injectable()
export class JwtAuthGuard extends AuthGuard('jwt') {
  constructor(private readonly reflector: Reflector) {
    super();
  }

  override canActivate(context: ExecutionContext) {
    const isPublic = this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC_KEY, [
      context.getHandler(),
      context.getClass(),
    ]);
    return isPublic === true ? true : super.canActivate(context);
  }

  override handleRequest<TUser>(error: unknown, user: TUser | false | null): TUser {
    if (error !== null && error !== undefined) {
      // Not a token problem (the strategy itself failed): let the filter log it as a 500.
      throw error instanceof Error
        ? error
        : new Error('Authentication strategy failed', { cause: error });
    }
    if (user === false || user === null || user === undefined) {
      throw new UnauthorizedException();
    }
    return user;
  }
}
