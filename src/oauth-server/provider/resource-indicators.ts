import type Provider from 'oidc-provider';
import type { Configuration } from 'oidc-provider';
import {
  resourceComparisonKey,
  type OAuthResource,
} from '../../config/settings/oauth-resources.js';

type ResourceIndicators = NonNullable<NonNullable<Configuration['features']>['resourceIndicators']>;

/** What the resource rules need besides the settings. */
export interface ResourceIndicatorParts {
  readonly resources: readonly OAuthResource[];
  readonly requireResource: boolean;
  /** The algorithm of the key that signs: a resource's access tokens are JWTs signed with it. */
  readonly signingAlgorithm: string;
  /** The library's `invalid_target` error (RFC 8707 §2). */
  readonly invalidTarget: (description: string) => Error;
}

/** The resource declared at `indicator`, compared canonically (scheme and host case). */
export function resourceAt(
  resources: readonly OAuthResource[],
  indicator: string,
): OAuthResource | undefined {
  const key = resourceComparisonKey(indicator);
  return key === null
    ? undefined
    : resources.find((resource) => resourceComparisonKey(resource.uri) === key);
}

/**
 * RFC 8707 through the library's `features.resourceIndicators`. A `resource` selects one of the
 * declared APIs (OAuthServer__Resources): its access token is a JWT signed with Keygate's key,
 * whose `aud` is the declared URI exactly and whose `scope` holds only that API's scopes (the
 * library filters the granted scopes by the ones returned here). An undeclared resource is
 * `invalid_target`; so is a token request naming another resource than its authorization (the
 * library's check). A token or refresh request without `resource` uses the granted one.
 */
export function resourceIndicators(parts: ResourceIndicatorParts): ResourceIndicators {
  return {
    enabled: true,
    defaultResource: (ctx, _client, oneOf) => {
      if (oneOf !== undefined) {
        // An authorization for several resources: the token request must choose one (the
        // library refuses an array with `invalid_target`).
        return oneOf.length === 1 ? oneOf[0] : oneOf;
      }
      if (parts.requireResource) {
        throw parts.invalidTarget('a resource indicator is required');
      }
      // A service's token is for a resource only: there is no person and no UserInfo to
      // default to (docs/operations/oauth-server.md, "Client credentials").
      if (ctx.oidc.params?.grant_type === 'client_credentials') {
        throw parts.invalidTarget(
          'a resource indicator is required for the client credentials grant',
        );
      }
      return undefined;
    },
    getResourceServerInfo: (_ctx, indicator) => {
      const resource = resourceAt(parts.resources, indicator);
      if (resource === undefined) {
        throw parts.invalidTarget('the resource indicator is not a resource of this server');
      }
      return {
        scope: resource.scopes.join(' '),
        audience: resource.uri,
        accessTokenTTL: resource.accessTokenMinutes * 60,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: parts.signingAlgorithm } },
      };
    },
    useGrantedResource: () => true,
  } as ResourceIndicators;
}

/** The members of the library's models this file replaces (not in its typings). */
interface GrantMembers {
  getResourceScope: (this: unknown, resource: string) => string;
  addResourceScope: (this: unknown, resource: string, scope: string) => void;
}

/**
 * Makes the library compare resource indicators canonically, as the MCP authorization
 * specification and RFC 8707 ask (scheme and host case, the default port): the library keeps a
 * `resource` as it was sent and compares it exactly, so an authorization for
 * `https://API.example.com/mcp` redeemed with `https://api.example.com/mcp` would be refused.
 * Two of its rules are replaced:
 *
 * - a code's, device code's or refresh token's resources (`resourceIndicators`, which the token
 *   and refresh requests are checked against) answer `has` canonically;
 * - a grant keeps each resource's scopes under the declared URI, whatever case was asked, and is
 *   read the same way, so consent is not asked again for another spelling of one resource.
 *
 * An indicator that no declared resource matches is kept as it is (and refused with
 * `invalid_target` by getResourceServerInfo).
 */
export function installCanonicalResources(
  provider: Provider,
  resources: readonly OAuthResource[],
): void {
  const canonical = (indicator: string): string =>
    resourceAt(resources, indicator)?.uri ?? indicator;

  Object.defineProperty(provider.BaseToken.prototype, 'resourceIndicators', {
    configurable: true,
    get(this: { resource?: string | string[] }) {
      const granted = Array.isArray(this.resource) ? this.resource : [this.resource];
      return new CanonicalResources(
        granted.filter((value): value is string => typeof value === 'string').map(canonical),
        canonical,
      );
    },
  });

  const grant = provider.Grant.prototype as unknown as GrantMembers;
  const { getResourceScope, addResourceScope } = grant;
  // `function`, not arrows: the library calls them on a grant and on its `rejected` record.
  grant.getResourceScope = function canonicalGetResourceScope(this: unknown, resource: string) {
    return getResourceScope.call(this, canonical(resource));
  };
  grant.addResourceScope = function canonicalAddResourceScope(
    this: unknown,
    resource: string,
    scope: string,
  ) {
    addResourceScope.call(this, canonical(resource), scope);
  };
}

/** A set of declared resource URIs that finds an indicator in any spelling of one. */
class CanonicalResources extends Set<string | undefined> {
  constructor(
    values: readonly string[],
    private readonly canonical: (indicator: string) => string,
  ) {
    super(values);
  }

  override has(value: string | undefined): boolean {
    return value !== undefined && super.has(this.canonical(value));
  }
}
