/**
 * What an admin API key may do, one scope per route (docs/operations/admin-api.md). A typed list:
 * a new capability is one entry here and one `@AdminRoute(...)` on its controller.
 */
export const ADMIN_SCOPES = [
  'users:read',
  'users:write',
  'sessions:write',
  'audit:read',
  'keys:read',
  'keys:write',
  'webhooks:read',
  'webhooks:write',
  'oauth-clients:read',
  'oauth-clients:write',
  'oauth-consents:read',
  'oauth-consents:write',
] as const;

export type AdminScopeName = (typeof ADMIN_SCOPES)[number];

export function isAdminScope(value: string): value is AdminScopeName {
  return (ADMIN_SCOPES as readonly string[]).includes(value);
}
