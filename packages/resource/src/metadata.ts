import { parseServerUrl } from './resource-uri.js';

export interface ProtectedResourceMetadataOptions {
  /** The authorization server's issuer identifier, exactly as its tokens' `iss`. */
  readonly issuer: string;
  /** This resource's identifier, exactly as clients name it (and as tokens' `aud`). */
  readonly resource: string;
  /** The scopes this resource understands, for clients choosing what to ask for. */
  readonly scopesSupported?: readonly string[];
  /** A human-readable name of the resource (RFC 9728 `resource_name`). */
  readonly resourceName?: string;
  /** A page for developers about the resource (RFC 9728 `resource_documentation`). */
  readonly resourceDocumentation?: string;
}

/** The OAuth 2.0 Protected Resource Metadata document (RFC 9728 §2). */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported?: string[];
  bearer_methods_supported: ['header'];
  resource_name?: string;
  resource_documentation?: string;
}

/**
 * The RFC 9728 document to serve at {@link protectedResourceMetadataUrl}: `resource` exactly as
 * given (a client compares it with the URL it called, RFC 9728 §3.3), one authorization server,
 * bearer tokens in the `Authorization` header only.
 */
export function protectedResourceMetadata(
  options: ProtectedResourceMetadataOptions,
): ProtectedResourceMetadata {
  parseServerUrl(options.issuer, 'issuer');
  parseServerUrl(options.resource, 'resource');
  const document: ProtectedResourceMetadata = {
    resource: options.resource,
    authorization_servers: [options.issuer],
    bearer_methods_supported: ['header'],
  };
  if (options.scopesSupported !== undefined) {
    document.scopes_supported = [...options.scopesSupported];
  }
  if (options.resourceName !== undefined) {
    document.resource_name = options.resourceName;
  }
  if (options.resourceDocumentation !== undefined) {
    document.resource_documentation = options.resourceDocumentation;
  }
  return document;
}

/**
 * Where a resource's metadata lives (RFC 9728 §3.1): `/.well-known/oauth-protected-resource`
 * inserted between the host and the path, so `https://api.example.com/mcp` has
 * `https://api.example.com/.well-known/oauth-protected-resource/mcp`.
 */
export function protectedResourceMetadataUrl(resource: string): string {
  const url = parseServerUrl(resource, 'resource');
  const path = url.pathname === '/' ? '' : url.pathname;
  return `${url.origin}/.well-known/oauth-protected-resource${path}${url.search}`;
}
