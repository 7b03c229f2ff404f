/**
 * The metadata key of an admin API route: the scope it needs (src/admin-api sets it, with its
 * guard, through @AdminScope). The account guards leave such routes to that guard: an access
 * token never opens one, and no route is open to both.
 */
export const ADMIN_SCOPE_KEY = 'keygate:adminScope';
