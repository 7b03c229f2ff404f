/**
 * The web front ends allowed to call the API from a browser (`Cors__AllowedOrigins`). An identity
 * service names the origins it serves: a page on any other origin must not be able to drive
 * registration and login from a visitor's browser.
 */
export interface AllowedOrigins {
  /** Serialized origins (`https://app.example.com`), exactly as browsers send `Origin`. */
  readonly exact: readonly string[];
  /**
   * Development only: loopback origins whose port may be anything (`http://localhost:*` is kept
   * as `http://localhost`), because front-end development servers move between ports.
   */
  readonly anyPortOf: readonly string[];
  /** Development only: `*`, every origin. */
  readonly any: boolean;
}

export interface ParsedAllowedOrigins {
  readonly origins: AllowedOrigins;
  /** Entries refused, one sentence each, naming the key and the entry. */
  readonly problems: readonly string[];
  readonly warnings: readonly string[];
}

const KEY = 'Cors__AllowedOrigins';
const PORT_WILDCARD = /^(https?):\/\/(.+):\*\/?$/i;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const PORT = /^\d{1,5}$/;

/** No front end at all: no CORS header is ever sent. */
export const NO_ALLOWED_ORIGINS: AllowedOrigins = { exact: [], anyPortOf: [], any: false };

/**
 * Reads the comma-separated entries of `Cors__AllowedOrigins`. Each is an origin (scheme, host and
 * optional port; a trailing `/` is tolerated, any other path is refused), normalised as browsers
 * serialise it (lower-case host, default port dropped). Wildcards exist only in development.
 */
export function parseAllowedOrigins(
  entries: readonly string[],
  isDevelopment: boolean,
): ParsedAllowedOrigins {
  const exact = new Set<string>();
  const anyPortOf = new Set<string>();
  const problems: string[] = [];
  const warnings: string[] = [];
  let anyOrigin = false;
  for (const entry of entries) {
    if (entry === '*') {
      if (isDevelopment) {
        anyOrigin = true;
        warnings.push(
          `${KEY} is "*": every origin may call the API from a browser, which is refused in production.`,
        );
      } else {
        problems.push(
          `${KEY}: "*" would let a page on any origin drive registration and login from a visitor's browser, so it is refused in production; list the exact origins of your front ends`,
        );
      }
      continue;
    }
    const wildcard = PORT_WILDCARD.exec(entry);
    if (wildcard !== null) {
      const base = `${wildcard[1]?.toLowerCase()}://${wildcard[2]?.toLowerCase()}`;
      if (!isDevelopment) {
        problems.push(
          `${KEY}: "${entry}" has a port wildcard, which is refused in production; list the exact origins of your front ends`,
        );
      } else if (!LOOPBACK_HOSTS.has(wildcard[2]?.toLowerCase() ?? '')) {
        problems.push(
          `${KEY}: "${entry}" has a port wildcard on a host other than localhost, 127.0.0.1 or [::1]`,
        );
      } else {
        anyPortOf.add(base);
      }
      continue;
    }
    const origin = originOf(entry);
    if (origin === null) {
      problems.push(
        `${KEY}: "${entry}" is not an origin (http or https, a host and an optional port, without path, query, fragment, credentials or wildcards)`,
      );
    } else {
      exact.add(origin);
    }
  }
  return {
    origins: { exact: [...exact], anyPortOf: [...anyPortOf], any: anyOrigin },
    problems,
    warnings,
  };
}

/** Whether any origin at all is allowed, i.e. whether the service speaks CORS. */
export function allowsSomeOrigin(origins: AllowedOrigins): boolean {
  return origins.any || origins.exact.length > 0 || origins.anyPortOf.length > 0;
}

/** A predicate for the `Origin` header of a request, built once. */
export function originMatcher(origins: AllowedOrigins): (origin: string) => boolean {
  const exact = new Set(origins.exact);
  return (origin) =>
    origins.any ||
    exact.has(origin) ||
    origins.anyPortOf.some(
      (base) =>
        origin === base ||
        (origin.startsWith(`${base}:`) && PORT.test(origin.slice(base.length + 1))),
    );
}

/** The serialized origin an entry names, or null when it names something else. */
export function originOf(entry: string): string | null {
  if (entry.includes('*') || entry.includes('?') || entry.includes('#')) {
    return null;
  }
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return null;
  }
  const isOrigin =
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    url.username === '' &&
    url.password === '' &&
    url.pathname === '/' &&
    // `https://a.example/` is the origin written with a slash; `https://a.example/./` is not.
    /^[^/]*\/\/[^/]+\/?$/.test(entry);
  return isOrigin ? url.origin : null;
}
