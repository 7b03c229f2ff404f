import {
  Injectable,
  NotFoundException,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { AdminApiMessages } from '../admin-api.messages.js';
import { ADMIN_SCOPE_KEY } from '../../common/decorators/admin-scope.js';
import { ForbiddenError } from '../../common/errors/domain-errors.js';
import { AppConfig } from '../../config/app-config.js';
import { cameViaManagement } from '../http/admin-listener.js';
import { AdminKeysService, type AdminPrincipal } from './admin-keys.service.js';
import type { AdminScopeName } from './admin-scopes.js';

/** A request the guard let through carries its key (never the secret). */
export type RequestWithAdminKey = FastifyRequest & { adminKey?: AdminPrincipal };

const BEARER = /^Bearer ([^\s]+)$/i;

/**
 * The admin API's guard, on every route @AdminScope marks: on the wrong listener, or while no
 * key exists, the route does not exist (404, as an unknown route); a missing, unknown or revoked
 * key is the bare 401 of the interface; a valid key without the route's scope is 403.
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
      // @AdminScope puts the metadata and this guard on a route together; never reached.
      throw new Error('AdminKeyGuard on a route without an admin scope');
    }
    const request = context.switchToHttp().getRequest<RequestWithAdminKey>();
    if (cameViaManagement(request.raw) !== this.onManagement) {
      throw new NotFoundException();
    }
    const match = BEARER.exec(request.headers.authorization ?? '');
    const key = match === null ? null : await this.keys.authenticate(match[1]);
    if (key === null) {
      if (!(await this.keys.anyActive())) {
        throw new NotFoundException();
      }
      throw new UnauthorizedException();
    }
    if (!key.scopes.includes(scope)) {
      throw new ForbiddenError(AdminApiMessages.forbidden);
    }
    request.adminKey = key;
    return true;
  }
}
