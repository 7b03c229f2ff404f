import { isLoopbackHost } from './oauth-server-settings.js';

/** An API the provider issues access tokens for (RFC 8707), from OAuthServer__Resources. */
export interface OAuthResource {
  /** Canonical (see canonicalResourceUri): the `aud` of its access tokens, exactly. */
  readonly uri: string;
  readonly name: string;
  readonly scopes: readonly string[];
  readonly accessTokenMinutes: number;
}

/** The scopes of OpenID Connect: a resource cannot declare them (they are the provider's own). */
const PROVIDER_SCOPES = new Set(['openid', 'profile', 'email', 'offline_access']);

/** RFC 6749 §3.3: printable ASCII but space, `"` and `\`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

const MAX_ACCESS_TOKEN_MINUTES = 60;

/**
 * The canonical form of a resource indicator, as the MCP specification compares them: scheme and
 * host in lower case, the default port left out, no trailing slash added to a bare origin, the
 * path and query as written; null when it is not an absolute `https:` URI (`http:` on loopback)
 * without credentials or fragment.
 */
export function canonicalResourceUri(value: string): string | null {
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
  const afterAuthority = value.slice(value.indexOf('//') + 2);
  const writtenPath = /^[^/?]*\//.test(afterAuthority);
  return `${url.origin}${writtenPath ? url.pathname : ''}${url.search}`;
}

/**
 * What two resource indicators are compared by: the URL standard's serialization (so a bare
 * origin and the same origin with `/` are one resource, as @keygate/resource compares them); null
 * when the value is not an acceptable resource URI.
 */
export function resourceComparisonKey(value: string): string | null {
  const canonical = canonicalResourceUri(value);
  return canonical === null ? null : new URL(canonical).href;
}

/**
 * OAuthServer__Resources: a JSON array of `{ "uri", "name", "scopes": [...],
 * "accessTokenMinutes" }`. Every problem is named with the entry it is in; `accessTokenMinutes`
 * left out is OAuthServer__AccessTokenMinutes.
 */
export function parseOAuthResources(
  raw: string,
  defaultMinutes: number,
): { resources: OAuthResource[]; problems: string[] } {
  if (raw.trim() === '') {
    return { resources: [], problems: [] };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { resources: [], problems: ['OAuthServer__Resources is not valid JSON'] };
  }
  if (!Array.isArray(parsed)) {
    return {
      resources: [],
      problems: [
        'OAuthServer__Resources must be a JSON array of { "uri", "name", "scopes", "accessTokenMinutes" }',
      ],
    };
  }
  const problems: string[] = [];
  const resources: OAuthResource[] = [];
  const seen = new Set<string>();
  parsed.forEach((entry: unknown, index) => {
    const where = `OAuthServer__Resources[${index}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      problems.push(`${where} is not an object`);
      return;
    }
    const fields = entry as Record<string, unknown>;
    const before = problems.length;
    const uri = typeof fields.uri === 'string' ? canonicalResourceUri(fields.uri.trim()) : null;
    if (uri === null) {
      problems.push(
        `${where}.uri: ${JSON.stringify(fields.uri)} is not an absolute https URI without credentials or fragment (http only on loopback)`,
      );
    } else if (seen.has(new URL(uri).href)) {
      problems.push(`${where}.uri: "${uri}" is declared twice`);
    }
    const name = typeof fields.name === 'string' ? fields.name.trim() : '';
    if (name === '') {
      problems.push(`${where}.name is required`);
    }
    const scopes = fields.scopes;
    if (
      !Array.isArray(scopes) ||
      scopes.length === 0 ||
      !scopes.every((scope) => typeof scope === 'string' && SCOPE_TOKEN.test(scope))
    ) {
      problems.push(`${where}.scopes must be a non-empty array of scope names without spaces`);
    } else if (scopes.some((scope: string) => PROVIDER_SCOPES.has(scope))) {
      problems.push(
        `${where}.scopes cannot hold openid, profile, email or offline_access (the provider's own scopes)`,
      );
    }
    const minutes = fields.accessTokenMinutes ?? defaultMinutes;
    if (
      typeof minutes !== 'number' ||
      !Number.isInteger(minutes) ||
      minutes < 1 ||
      minutes > MAX_ACCESS_TOKEN_MINUTES
    ) {
      problems.push(
        `${where}.accessTokenMinutes must be a whole number from 1 to ${MAX_ACCESS_TOKEN_MINUTES}`,
      );
    }
    if (problems.length === before && uri !== null) {
      seen.add(new URL(uri).href);
      resources.push({
        uri,
        name,
        scopes: [...new Set(scopes as string[])],
        accessTokenMinutes: minutes as number,
      });
    }
  });
  return { resources: problems.length === 0 ? resources : [], problems };
}
