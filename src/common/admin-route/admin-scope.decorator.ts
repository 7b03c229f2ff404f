import { applyDecorators, HttpStatus, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth } from '@nestjs/swagger';
import {
  ApiErrorResponses,
  type DocumentedFailure,
} from '../swagger/api-error-responses.decorator.js';
import { ADMIN_FORBIDDEN, ADMIN_SCOPE_KEY } from './admin-scope.js';
import type { AdminScopeName } from './admin-scopes.js';

/** The security scheme of the admin API document: an admin key as a bearer token. */
export const ADMIN_KEY_SCHEME = 'adminKey';

/**
 * An admin API route needing `scope`. The metadata takes the route away from the account guards
 * and hands it to the admin key guard, which the admin API registers for every route: no route
 * marked here is ever left without a check, whichever capability's folder declares it.
 */
export const AdminScope = (scope: AdminScopeName): MethodDecorator =>
  applyDecorators(SetMetadata(ADMIN_SCOPE_KEY, scope), ApiBearerAuth(ADMIN_KEY_SCHEME));

/**
 * An admin API route needing `scope` (`@AdminScope`), documenting its error answers
 * (`@ApiErrorResponses`) together with the 403 every admin route gives a key without the scope.
 */
export const AdminRoute = (
  scope: AdminScopeName,
  ...failures: ReadonlyArray<HttpStatus | DocumentedFailure>
): MethodDecorator =>
  applyDecorators(AdminScope(scope), ApiErrorResponses(...failures, ADMIN_FORBIDDEN));
