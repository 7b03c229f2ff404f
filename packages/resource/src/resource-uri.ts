/** Hosts whose `http:` URLs are accepted: a server on this machine, for development and tests. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The URL in `value`, which must be absolute, `https:` (or `http:` on a loopback host) and have no
 * fragment (RFC 8707 §2, RFC 9728 §1.2, RFC 8414 §2); a TypeError names `what` otherwise.
 */
export function parseServerUrl(value: unknown, what: string): URL {
  if (typeof value !== 'string' || !URL.canParse(value)) {
    throw new TypeError(`${what} must be an absolute URL.`);
  }
  const url = new URL(value);
  if (
    url.protocol !== 'https:' &&
    !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))
  ) {
    throw new TypeError(`${what} must be an https URL (http only on localhost).`);
  }
  if (url.hash !== '' || value.includes('#')) {
    throw new TypeError(`${what} must not have a fragment.`);
  }
  return url;
}

/**
 * The canonical form of a resource URI, as the MCP specification compares them: scheme and host
 * lower-cased, the default port dropped, no fragment; the path and query as they are
 * (case-sensitive). Undefined for a value that is not an absolute URL.
 */
export function canonicalResource(value: unknown): string | undefined {
  if (typeof value !== 'string' || !URL.canParse(value)) {
    return undefined;
  }
  const url = new URL(value);
  url.hash = '';
  return url.href;
}
