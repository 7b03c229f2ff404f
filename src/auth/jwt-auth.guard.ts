import { Injectable, UnauthorizedException, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { AccessTokenClaims } from '../common/decorators/current-user.decorator.js';
import { ADMIN_SCOPE_KEY } from '../common/admin-route/admin-scope.js';
import { IS_PUBLIC_KEY } from '../common/decorators/public.decorator.js';
import type { RequestWithAccount } from '../users/current-account.decorator.js';
import type { GuardRefusal } from '../common/swagger/openapi-document.js';
import { UsersMessages } from '../users/users.messages.js';
import { UsersService } from '../users/users.service.js';
import { JwtStrategy } from './jwt.strategy.js';

/** The guard's answers for a valid token whose account may not act, for the API document. */
export const ACCOUNT_REFUSALS: readonly GuardRefusal[] = [
  {
    status: 401,
    description: 'Not authorized; the message says why.',
    messages: { deactivated: UsersMessages.deactivated },
  },
  {
    status: 404,
    description: "The access token's account no longer exists.",
    messages: { notFound: UsersMessages.notFound },
  },
];

/**
 * Global guard: every route needs a valid bearer token unless it is marked @Public(), so a
 * forgotten decorator fails closed. Every token failure is the same bare 401. Then the token's
 * account must still exist and be active, on every protected route, extension modules' included:
 * otherwise the answers of SPEC §4.2 `me`, 404 `Usuario no encontrado.` and 401
 * `Cuenta desactivada.`. The account read here is the request's (see CurrentAccount).
 */
@Injectable()
export class JwtAuthGuard extends AuthGuard('jwt') {
  private readonly publicRoutes = new WeakMap<object, WeakMap<object, boolean>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly usersService: UsersService,
    private readonly strategy: JwtStrategy,
  ) {
    super();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.isPublic(context)) {
      return true;
    }
    const request = context
      .switchToHttp()
      .getRequest<RequestWithAccount & { user: AccessTokenClaims }>();
    // A token verified before needs only its expiry checked (JwtStrategy.rememberedClaims), so
    // passport's per-request setup is skipped for it; any other goes through passport-jwt.
    const remembered = this.strategy.rememberedClaims(request);
    if (remembered === null) {
      throw new UnauthorizedException();
    }
    if (remembered === undefined) {
      // AuthGuard resolves true or throws (handleRequest below); it sets request.user.
      await super.canActivate(context);
    } else {
      request.user = remembered;
    }
    request.account = await this.usersService.requireActiveAccount(request.user.sub);
    return true;
  }

  /**
   * Whether the route is marked @Public() or is an admin API route, read once per handler and controller: routes and their
   * metadata are fixed once the app is built, and reading it cost as much as the rest of the
   * guard's work for a remembered token.
   */
  private isPublic(context: ExecutionContext): boolean {
    const handler = context.getHandler();
    const controller = context.getClass();
    let handlers = this.publicRoutes.get(controller);
    if (handlers === undefined) {
      handlers = new WeakMap();
      this.publicRoutes.set(controller, handlers);
    }
    let isPublic = handlers.get(handler);
    if (isPublic === undefined) {
      // An admin API route is not an account's: the admin key guard alone decides there.
      isPublic =
        this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC_KEY, [
          handler,
          controller,
        ]) === true ||
        this.reflector.getAllAndOverride<string | undefined>(ADMIN_SCOPE_KEY, [
          handler,
          controller,
        ]) !== undefined;
      handlers.set(handler, isPublic);
    }
    return isPublic;
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
