import type { onRequestHookHandler } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';
import type { HstsConfig } from '../config/app-config.js';

/**
 * The answers of the API are JSON for programs, never a document to render: nothing may load,
 * frame or submit from them. With `nosniff`, a browser never runs one as a script or page either.
 */
const API_CONTENT_SECURITY_POLICY = {
  useDefaults: false,
  directives: {
    defaultSrc: ["'none'"],
    baseUri: ["'none'"],
    formAction: ["'none'"],
    frameAncestors: ["'none'"],
  },
} as const;

/**
 * The development Swagger UI: its scripts, styles and images come from the service itself, and
 * "Try it out" calls the service itself, so nothing else is allowed: no request leaves the host.
 * Its HTML carries inline `<style>` blocks and attributes (hence `'unsafe-inline'` for styles
 * only); its CSS draws icons from `data:` URLs.
 */
const DOCUMENTATION_CONTENT_SECURITY_POLICY = {
  useDefaults: false,
  directives: {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'", "'unsafe-inline'"],
    imgSrc: ["'self'", 'data:'],
    connectSrc: ["'self'"],
    objectSrc: ["'none'"],
    baseUri: ["'none'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
  },
} as const;

/** The routes of the Swagger UI's pages (development only), which get the documentation's policy. */
const DOCUMENTATION_PAGES: ReadonlySet<string> = new Set(['/', '/index.html']);

/** One set of response headers, names lower-case, as Fastify's `reply.headers()` takes them. */
export type HeaderSet = Readonly<Record<string, string>>;

/**
 * The caching policy of every answer. RFC 6749 §5.1 requires `no-store` of answers that carry
 * tokens; no answer of an identity service is worth keeping in a shared cache or in the
 * browser's. `Pragma` is for HTTP/1.0 caches. An answer that chooses its own policy (the health
 * probes' is stricter still) replaces these, since they are set first.
 */
export const NO_CACHING: HeaderSet = { 'cache-control': 'no-store', pragma: 'no-cache' };

/**
 * The headers of every answer, as an onRequest hook: the caching policy and helmet's headers,
 * the API's policy everywhere, the documentation's on the Swagger UI's pages;
 * Strict-Transport-Security only when configured.
 *
 * helmet is the source of the headers, but its middleware runs once per policy, at start-up,
 * against a response that only records them (headersOf); each request then gets the recorded
 * set in one `reply.headers()` call. Running helmet's dozen middlewares on every request, each
 * validating its header through Node's `setHeader`, and Fastify then merging them again into its
 * own at `writeHead`, cost about a fifth of the CPU of a `GET /me` (see
 * docs/decisions/0013-security-headers-built-once.md and 0026). The headers do not depend on the
 * request; an answer that sets one of them itself still replaces it.
 */
export function securityHeaders(hsts: HstsConfig): onRequestHookHandler {
  const shared: HelmetOptions = {
    xFrameOptions: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    strictTransportSecurity: hsts.enabled
      ? { maxAge: hsts.maxAgeSeconds, includeSubDomains: hsts.includeSubDomains, preload: false }
      : false,
  };
  const api = headersOf(helmet({ ...shared, contentSecurityPolicy: API_CONTENT_SECURITY_POLICY }));
  const documentation = headersOf(
    helmet({ ...shared, contentSecurityPolicy: DOCUMENTATION_CONTENT_SECURITY_POLICY }),
  );
  return (request, reply, done) => {
    const route = request.routeOptions.url;
    void reply.headers(route !== undefined && DOCUMENTATION_PAGES.has(route) ? documentation : api);
    done();
  };
}

/** What a helmet middleware adds and removes: its calls are all it does with the response. */
interface RecordingResponse {
  setHeader(name: string, value: string | number | readonly string[]): void;
  removeHeader(name: string): void;
}

/**
 * The caching policy plus the headers `middleware` writes, recorded from one run against a
 * response that keeps them (helmet sets its headers synchronously and reads nothing of the
 * request or response). Exported for the test that compares it with helmet on a real response.
 */
export function headersOf(middleware: ReturnType<typeof helmet>): HeaderSet {
  const headers: Record<string, string> = { ...NO_CACHING };
  const response: RecordingResponse = {
    setHeader(name, value) {
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    },
    removeHeader(name) {
      delete headers[name.toLowerCase()];
    },
  };
  middleware(
    {} as unknown as IncomingMessage,
    response as unknown as ServerResponse,
    (error?: unknown) => {
      if (error !== undefined) {
        throw error instanceof Error ? error : new Error('helmet refused its options');
      }
    },
  );
  return Object.freeze(headers);
}
