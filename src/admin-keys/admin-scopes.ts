/**
 * What an admin API key may do, one scope per route (docs/operations/admin-api.md). A typed list:
 * signing keys (`keys:read`, `keys:write`) and webhooks (`webhooks:read`, `webhooks:write`) are
 * one entry each here, and one `@AdminScope(...)` on their controller, when they land.
 */
export const ADMIN_SCOPES = ['users:read', 'users:write', 'sessions:write', 'audit:read'] as const;

export type AdminScopeName = (typeof ADMIN_SCOPES)[number];

export function isAdminScope(value: string): value is AdminScopeName {
  return (ADMIN_SCOPES as readonly string[]).includes(value);
}
