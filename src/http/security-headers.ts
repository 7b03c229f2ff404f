import type { onRequestHookHandler } from 'fastify';
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

/**
 * helmet's headers for every answer, as an onRequest hook: the API's policy everywhere, the
 * documentation's on the Swagger UI's pages; Strict-Transport-Security only when configured.
 *
 * helmet's middleware is built once per policy, here: @fastify/helmet builds it again inside
 * every request, which made the headers cost several times the CPU per request (see
 * docs/decisions/0013-security-headers-built-once.md, and
 * https://github.com/helmetjs/helmet/issues/430).
 */
export function securityHeaders(hsts: HstsConfig): onRequestHookHandler {
  const shared: HelmetOptions = {
    xFrameOptions: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    strictTransportSecurity: hsts.enabled
      ? { maxAge: hsts.maxAgeSeconds, includeSubDomains: hsts.includeSubDomains, preload: false }
      : false,
  };
  const api = helmet({ ...shared, contentSecurityPolicy: API_CONTENT_SECURITY_POLICY });
  const documentation = helmet({
    ...shared,
    contentSecurityPolicy: DOCUMENTATION_CONTENT_SECURITY_POLICY,
  });
  return (request, reply, done) => {
    const route = request.routeOptions.url;
    const apply = route !== undefined && DOCUMENTATION_PAGES.has(route) ? documentation : api;
    // helmet sets its headers synchronously, and since 8.1 throws rather than report through
    // `next`: nothing is left to wait for.
    apply(request.raw, reply.raw, ignore);
    done();
  };
}

function ignore(): void {}
