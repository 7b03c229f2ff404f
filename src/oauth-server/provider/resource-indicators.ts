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
    defaultResource: (_ctx, _client, oneOf) => {
      if (oneOf !== undefined) {
        // An authorization for several resources: the token request must choose one (the
        // library refuses an array with `invalid_target`).
        return oneOf.length === 1 ? oneOf[0] : oneOf;
      }
      if (parts.requireResource) {
        throw parts.invalidTarget('a resource indicator is required');
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
