import { HttpStatus } from '@nestjs/common';
import { AdminRouteMessages } from './admin-route.messages.js';

/**
 * The metadata key of an admin API route: the scope it needs (set by @AdminScope). The account
 * guards leave such routes to the admin key guard: an access token never opens one, and no route
 * is open to both.
 */
export const ADMIN_SCOPE_KEY = 'keygate:adminScope';

/** The documented refusal of every admin route: a valid key without the route's scope. */
export const ADMIN_FORBIDDEN = {
  status: HttpStatus.FORBIDDEN,
  messages: { forbidden: AdminRouteMessages.forbidden },
};
