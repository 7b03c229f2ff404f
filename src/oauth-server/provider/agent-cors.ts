import type { Configuration } from 'oidc-provider';

/** The library's routes a browser-based agent or inspector calls from any origin. */
const OPEN_ROUTES = new Set(['token', 'revocation']);

/**
 * The library's CORS rule for its client-authenticated routes. The token and revocation
 * endpoints answer any origin (browser-based agents and inspectors register nothing that names
 * their origin; the request is authenticated by the client and the code or token, never by a
 * cookie). UserInfo and introspection keep the library's own rule: a public client's redirect
 * origins. The discovery documents are open in the library itself; Keygate's other routes keep
 * their own CORS (src/http/cors.ts, the configured front ends only).
 */
export const corsForAgents: NonNullable<Configuration['clientBasedCORS']> = (
  ctx,
  origin,
  client,
) => {
  if (origin === 'null') {
    return false;
  }
  if (OPEN_ROUTES.has(String(ctx.oidc.route))) {
    return true;
  }
  if (ctx.oidc.route === 'userinfo' || client.clientAuthMethod === 'none') {
    return (client.redirectUris ?? []).some((uri) => URL.parse(uri)?.origin === origin);
  }
  return false;
};

/**
 * The registration endpoint's CORS (the library gives it none): any origin, as the token and
 * revocation endpoints, for browser-based agents and inspectors. A registration carries no
 * cookie; an initial access token, when one is required, comes in the Authorization header.
 */
export const REGISTRATION_CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'WWW-Authenticate, Retry-After',
} as const;

/** The answer to a registration's preflight request. */
export const REGISTRATION_PREFLIGHT_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST',
  'access-control-allow-headers': 'Authorization, Content-Type',
  'access-control-max-age': '600',
} as const;
