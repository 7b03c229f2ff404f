import type { FastifyHelmetOptions } from '@fastify/helmet';
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
};

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
};

/** The pages of the Swagger UI (development only), which get the documentation's policy. */
export const DOCUMENTATION_PAGES: ReadonlySet<string> = new Set(['/', '/index.html']);

/** @fastify/helmet for every answer; Strict-Transport-Security only when configured. */
export function securityHeaderOptions(hsts: HstsConfig): FastifyHelmetOptions {
  return {
    global: true,
    contentSecurityPolicy: API_CONTENT_SECURITY_POLICY,
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    strictTransportSecurity: hsts.enabled
      ? { maxAge: hsts.maxAgeSeconds, includeSubDomains: hsts.includeSubDomains, preload: false }
      : false,
  };
}

/** Route options for a documentation page: its own policy, on top of the others. */
export const DOCUMENTATION_SECURITY_HEADERS = {
  contentSecurityPolicy: DOCUMENTATION_CONTENT_SECURITY_POLICY,
};
