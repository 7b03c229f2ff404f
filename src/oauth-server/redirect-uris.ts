import { isLoopbackHost } from '../config/settings/oauth-server-settings.js';

export const REDIRECT_URI_MAX_LENGTH = 2048;

/** A private-use scheme of a native application: reverse domain name (RFC 8252 §7.1). */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/;

/** Loopback IP literals, where a native application listens on a port of the moment (RFC 8252 §7.3). */
const LOOPBACK_LITERALS = new Set(['127.0.0.1', '[::1]']);

/**
 * Whether `value` may be registered as a redirect (or post-logout redirect) URI: absolute, at
 * most 2048 characters, no credentials and no fragment, and `https:`, `http:` on loopback only,
 * or a native application's private-use scheme (`com.example.app:/callback`).
 */
export function isRegistrableRedirectUri(value: string): boolean {
  if (value.length === 0 || value.length > REDIRECT_URI_MAX_LENGTH || value.includes('#')) {
    return false;
  }
  if (/[\s\p{Cc}]/u.test(value)) {
    return false;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.username !== '' || url.password !== '') {
    return false;
  }
  if (url.protocol === 'https:') {
    return url.hostname !== '';
  }
  if (url.protocol === 'http:') {
    return isLoopbackHost(url.hostname);
  }
  return PRIVATE_USE_SCHEME.test(url.protocol);
}

/**
 * Whether `presented` is one of the `registered` redirect URIs: character for character (no
 * prefix, no case folding, no normalisation, no wildcard), except that for a public (native)
 * client a registered `http:` URI on a loopback IP literal matches any port (RFC 8252 §7.3), with
 * everything else still exact.
 */
export function matchesRegisteredRedirectUri(
  presented: string,
  registered: readonly string[],
  isPublic: boolean,
): boolean {
  if (registered.includes(presented)) {
    return true;
  }
  if (!isPublic) {
    return false;
  }
  const presentedWithoutPort = loopbackWithoutPort(presented);
  return (
    presentedWithoutPort !== null &&
    registered.some((uri) => loopbackWithoutPort(uri) === presentedWithoutPort)
  );
}

/**
 * `http://127.0.0.1:PORT/rest` → `http://127.0.0.1/rest`, taken from the text as written so that
 * nothing but the port is set aside; null when the URI is not http on a loopback IP literal.
 */
function loopbackWithoutPort(uri: string): string | null {
  const match = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?([/?].*)?$/.exec(uri);
  if (match === null || !LOOPBACK_LITERALS.has(match[1])) {
    return null;
  }
  const port = match[2];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) {
    return null;
  }
  return `http://${match[1]}${match[3] ?? ''}`;
}
