import {
  Injectable,
  NotFoundException,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ADMIN_SCOPE_KEY } from '../../common/admin-route/admin-scope.js';
import { bearerCredentials } from '../../common/bearer/bearer-credentials.js';
import { ForbiddenError } from '../../common/errors/domain-errors.js';
import { AppConfig } from '../../config/app-config.js';
import { cameViaManagement } from '../http/admin-listener.js';
import { AdminKeysService } from './admin-keys.service.js';
import type { RequestWithAdminKey } from '../../common/admin-route/current-admin.decorator.js';
import { AdminRouteMessages } from '../../common/admin-route/admin-route.messages.js';
import type { AdminScopeName } from '../../common/admin-route/admin-scopes.js';

/**
 * The admin API's guard, global, acting on every route @AdminScope marks, whichever folder
 * declares it: on the wrong listener, or while no
 * key exists, the route does not exist (404, as an unknown route); a missing, unknown or revoked
 * key, or one not sent as exactly `Bearer <key>` (bearerCredentials, the account routes' rule),
 * is the bare 401 of the interface; a valid key without the route's scope is 403.
 */
@Injectable()
export class AdminKeyGuard implements CanActivate {
  private readonly onManagement: boolean;

  constructor(
    private readonly reflector: Reflector,
    private readonly keys: AdminKeysService,
    config: AppConfig,
  ) {
    this.onManagement = config.adminApi.listener === 'management';
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const scope = this.reflector.get<AdminScopeName | undefined>(
      ADMIN_SCOPE_KEY,
      context.getHandler(),
    );
    if (scope === undefined) {
      // Registered for every route (AdminApiModule): the routes @AdminScope does not mark are the
      // account guards' alone.
      return true;
    }
    const request = context.switchToHttp().getRequest<RequestWithAdminKey>();
    if (cameViaManagement(request.raw) !== this.onManagement) {
      throw new NotFoundException();
    }
    const secret = bearerCredentials(request.headers.authorization);
    const key = secret === null ? null : await this.keys.authenticate(secret);
    if (key === null) {
      if (!(await this.keys.anyActive())) {
        throw new NotFoundException();
      }
      throw new UnauthorizedException();
    }
    if (!key.scopes.includes(scope)) {
      throw new ForbiddenError(AdminRouteMessages.forbidden);
    }
    request.adminKey = key;
    return true;
  }
}
