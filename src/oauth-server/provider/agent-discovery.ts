import type Provider from 'oidc-provider';
import type { OAuthResource } from '../../config/settings/oauth-resources.js';

/**
 * Discovery for agents (MCP clients read `scopes_supported` to know what to ask): the library
 * lists only its OpenID scopes (`offline_access` among them), and its `discovery` setting cannot
 * replace a member it writes itself, so every declared resource's scopes are added to its
 * answer here, after it is built.
 */
export function installAgentDiscovery(
  provider: Provider,
  resources: readonly OAuthResource[],
): void {
  const resourceScopes = resources.flatMap((resource) => resource.scopes);
  if (resourceScopes.length === 0) {
    return;
  }
  provider.use(async (ctx, next) => {
    await next();
    const route = (ctx.oidc as { route?: string } | undefined)?.route;
    const body = ctx.body as { scopes_supported?: unknown } | undefined;
    if (route === 'discovery' && body !== undefined && Array.isArray(body.scopes_supported)) {
      const listed = body.scopes_supported as string[];
      body.scopes_supported = [...new Set([...listed, ...resourceScopes])];
    }
  });
}
