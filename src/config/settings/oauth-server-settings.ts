import type { DynamicRegistrationMode, EnvironmentVariables } from '../environment-variables.js';
import { parseOAuthResources, type OAuthResource } from './oauth-resources.js';

/** Keygate as an OpenID provider (src/oauth-server); null in AppConfig when off (the default). */
export interface OAuthServerConfig {
  /** The issuer: an origin without a path or a trailing slash (`https://id.example.com`). */
  readonly issuer: string;
  readonly accessTokenMinutes: number;
  readonly refreshTokenDays: number;
  /** A team's own consent page; null: the built-in one. */
  readonly consentUrl: string | null;
  /** The APIs access tokens are issued for (RFC 8707); empty: none declared. */
  readonly resources: readonly OAuthResource[];
  /** A request that names no `resource` is refused with `invalid_target`. */
  readonly requireResource: boolean;
  /** Dynamic client registration (RFC 7591): off, open, or with a CLI-made initial access token. */
  readonly dynamicRegistration: DynamicRegistrationMode;
  /** An `https` URL may be a `client_id`, whose metadata document Keygate fetches. */
  readonly clientIdMetadataDocuments: boolean;
  /** That fetch may reach private, loopback and link-local addresses. */
  readonly allowPrivateFetch: boolean;
  /** The device authorization grant (RFC 8628) is served: `/oauth/device/auth`, `/oauth/device`. */
  readonly deviceFlow: boolean;
  /** The client credentials grant is served, to confidential clients, for a resource only. */
  readonly clientCredentials: boolean;
}

/** The oldest Node line the protocol library (oidc-provider 9) runs on. */
export const OAUTH_SERVER_MIN_NODE_MAJOR = 22;

/** Host names that never leave the machine: `http:` is allowed there, for development. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname.toLowerCase()) || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/**
 * The OAuthServer__* keys. Off: null, and the other keys are not looked at. On: the issuer is
 * required (an origin, `https:` or `http:` on loopback), the consent URL is empty or absolute
 * under the same rule, the access tokens must be signed asymmetrically (applications verify ID
 * tokens with the published keys, never with the shared secret) and the runtime must be a Node
 * line the protocol library runs on.
 */
export function checkOAuthServer(
  env: EnvironmentVariables,
  nodeVersion: string,
): { oauthServer: OAuthServerConfig | null; problems: string[] } {
  if (!env.OAuthServer__Enabled) {
    return { oauthServer: null, problems: [] };
  }
  const problems: string[] = [];
  if (env.Jwt__SigningAlgorithm === 'HS256') {
    problems.push(
      'OAuthServer__Enabled=true needs an asymmetric Jwt__SigningAlgorithm (ES256, EdDSA or RS256): applications verify ID tokens with the keys /.well-known/jwks.json publishes, never with the shared HS256 secret',
    );
  }
  const major = Number(/^v?(\d+)\./.exec(nodeVersion)?.[1] ?? 0);
  if (major < OAUTH_SERVER_MIN_NODE_MAJOR) {
    problems.push(
      `OAuthServer__Enabled=true needs Node ${OAUTH_SERVER_MIN_NODE_MAJOR} or later (this is ${nodeVersion}): the OpenID provider library does not run on older lines`,
    );
  }
  const issuer = env.OAuthServer__Issuer.trim();
  let issuerOrigin: string | null = null;
  if (issuer === '') {
    problems.push('OAuthServer__Issuer is required when OAuthServer__Enabled=true');
  } else {
    issuerOrigin = originWithoutPath(issuer);
    if (issuerOrigin === null) {
      problems.push(
        `OAuthServer__Issuer: "${issuer}" is not an origin without a path (https://id.example.com; http only on loopback)`,
      );
    }
  }
  const consent = env.OAuthServer__ConsentUrl.trim();
  let consentUrl: string | null = null;
  if (consent !== '') {
    consentUrl = absoluteUrl(consent);
    if (consentUrl === null) {
      problems.push(
        `OAuthServer__ConsentUrl: "${consent}" is not an absolute https URL without credentials or fragment (http only on loopback)`,
      );
    }
  }
  const { resources, problems: resourceProblems } = parseOAuthResources(
    env.OAuthServer__Resources,
    env.OAuthServer__AccessTokenMinutes,
  );
  problems.push(...resourceProblems);
  if (
    env.OAuthServer__ClientCredentials &&
    resources.length === 0 &&
    resourceProblems.length === 0
  ) {
    problems.push(
      'OAuthServer__ClientCredentials=true needs at least one resource in OAuthServer__Resources: its tokens are for a resource only',
    );
  }
  if (env.OAuthServer__RequireResource && resources.length === 0 && resourceProblems.length === 0) {
    problems.push(
      'OAuthServer__RequireResource=true needs at least one resource in OAuthServer__Resources',
    );
  }
  if (problems.length > 0 || issuerOrigin === null) {
    return { oauthServer: null, problems };
  }
  return {
    oauthServer: {
      issuer: issuerOrigin,
      accessTokenMinutes: env.OAuthServer__AccessTokenMinutes,
      refreshTokenDays: env.OAuthServer__RefreshTokenDays,
      consentUrl,
      resources,
      requireResource: env.OAuthServer__RequireResource,
      dynamicRegistration: env.OAuthServer__DynamicRegistration,
      clientIdMetadataDocuments: env.OAuthServer__ClientIdMetadataDocuments,
      allowPrivateFetch: env.OAuthServer__AllowPrivateFetch,
      deviceFlow: env.OAuthServer__DeviceFlow,
      clientCredentials: env.OAuthServer__ClientCredentials,
    },
    problems,
  };
}

function parsedSafeUrl(value: string): URL | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  const secure =
    url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
  if (!secure || url.username !== '' || url.password !== '' || value.includes('#')) {
    return null;
  }
  return url;
}

/** `value` as a serialized origin, when it is exactly one (no path, query or trailing slash). */
function originWithoutPath(value: string): string | null {
  const url = parsedSafeUrl(value);
  if (url === null || url.search !== '' || url.pathname !== '/' || value.endsWith('/')) {
    return null;
  }
  return url.origin;
}

function absoluteUrl(value: string): string | null {
  return parsedSafeUrl(value)?.href ?? null;
}
