import { applyDecorators, SetMetadata, UseGuards } from '@nestjs/common';
import { ApiBearerAuth } from '@nestjs/swagger';
import { ADMIN_SCOPE_KEY } from '../../common/decorators/admin-scope.js';
import { AdminKeyGuard } from './admin-key.guard.js';
import type { AdminScopeName } from './admin-scopes.js';

/** The security scheme of the admin API document: an admin key as a bearer token. */
export const ADMIN_KEY_SCHEME = 'adminKey';

/**
 * An admin API route needing `scope`. The metadata takes the route away from the account guards
 * and the guard it brings checks the key, so the two can only come together: no admin route is
 * ever left without a check.
 */
export const AdminScope = (scope: AdminScopeName): MethodDecorator =>
  applyDecorators(
    SetMetadata(ADMIN_SCOPE_KEY, scope),
    UseGuards(AdminKeyGuard),
    ApiBearerAuth(ADMIN_KEY_SCHEME),
  );
