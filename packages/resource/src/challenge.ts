import { parseServerUrl } from './resource-uri.js';

export interface ChallengeOptions {
  /** Where the resource's metadata is served ({@link protectedResourceMetadataUrl}). */
  readonly resourceMetadataUrl: string;
  /**
   * Absent for a request without a token (401), `invalid_token` for a refused token (401),
   * `insufficient_scope` for a token without the scopes the request needs (403).
   */
  readonly error?: 'invalid_token' | 'insufficient_scope';
  /** The scopes the request needs; required with `insufficient_scope`. */
  readonly scope?: string | readonly string[];
  /** A sentence for the developer of the client; never the reason a token was refused in detail. */
  readonly errorDescription?: string;
}

/** RFC 6750 §3: a scope token is %x21 / %x23-5B / %x5D-7E. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
/** RFC 6750 §3: error_description is %x20-21 / %x23-5B / %x5D-7E. */
const DESCRIPTION = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * The `WWW-Authenticate` value of a 401 or 403 (RFC 6750 §3, RFC 9728 §5.1):
 * `Bearer error="insufficient_scope", scope="files:read files:write",
 * resource_metadata="https://api.example.com/.well-known/oauth-protected-resource"`.
 * Every value is checked against the grammar, so nothing a caller passes can break the header.
 */
export function challenge(options: ChallengeOptions): string {
  const metadataUrl = parseServerUrl(options.resourceMetadataUrl, 'resourceMetadataUrl').href;
  if (/["\\]/.test(metadataUrl)) {
    throw new TypeError('resourceMetadataUrl has characters a quoted value cannot carry.');
  }
  const scopes =
    options.scope === undefined
      ? []
      : typeof options.scope === 'string'
        ? options.scope.split(' ').filter((scope) => scope !== '')
        : [...options.scope];
  for (const scope of scopes) {
    if (!SCOPE_TOKEN.test(scope)) {
      throw new TypeError(`scope ${JSON.stringify(scope)} is not a scope token (RFC 6750 §3).`);
    }
  }
  if (options.error === 'insufficient_scope' && scopes.length === 0) {
    throw new TypeError('insufficient_scope needs the scopes the request requires.');
  }
  if (
    options.error !== undefined &&
    options.error !== 'invalid_token' &&
    options.error !== 'insufficient_scope'
  ) {
    throw new TypeError('error must be invalid_token or insufficient_scope.');
  }
  if (options.errorDescription !== undefined && !DESCRIPTION.test(options.errorDescription)) {
    throw new TypeError('errorDescription has characters a challenge cannot carry (RFC 6750 §3).');
  }
  const parameters: string[] = [];
  if (options.error !== undefined) {
    parameters.push(`error="${options.error}"`);
  }
  if (scopes.length > 0) {
    parameters.push(`scope="${scopes.join(' ')}"`);
  }
  parameters.push(`resource_metadata="${metadataUrl}"`);
  if (options.errorDescription !== undefined) {
    parameters.push(`error_description="${options.errorDescription}"`);
  }
  return `Bearer ${parameters.join(', ')}`;
}
