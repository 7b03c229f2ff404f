import type Provider from 'oidc-provider';
import { UNKNOWN_CLIENT_IP } from '../../common/network/client-address.js';
import { requestOrigins } from '../events/request-origins.js';
import {
  REGISTRATION_CORS_HEADERS,
  REGISTRATION_PREFLIGHT_HEADERS,
} from '../provider/agent-cors.js';
import { registrationOrigin } from './registration-origin.js';
import type { RegistrationRate } from './registration-rate.js';

/**
 * The most bytes a registration request may hold. A registration is a few URIs and a name; the
 * library alone would read 56 KiB.
 */
export const REGISTRATION_BODY_LIMIT_BYTES = 16 * 1024;

/**
 * What comes before the library reads a registration at `path`: its CORS (any origin), the rate
 * per client address, and the size of its body, which must be declared (Content-Length) and at
 * most REGISTRATION_BODY_LIMIT_BYTES. The refusals are OAuth error bodies (RFC 6749 §5.2), as
 * the library's own. The rest of the request runs with its origin (registration-origin.ts).
 */
export function installRegistrationEdge(
  provider: Provider,
  path: string,
  rate: RegistrationRate,
): void {
  provider.use(async (ctx, next) => {
    if (ctx.path !== path) {
      await next();
      return;
    }
    if (ctx.method === 'OPTIONS') {
      ctx.set(REGISTRATION_PREFLIGHT_HEADERS);
      ctx.status = 204;
      return;
    }
    if (ctx.method !== 'POST') {
      await next();
      return;
    }
    ctx.set(REGISTRATION_CORS_HEADERS);
    const origin = requestOrigins.get(ctx.req) ?? {
      ip: UNKNOWN_CLIENT_IP,
      userAgent: null,
      requestId: '',
    };
    const wait = rate.attempt(origin.ip);
    if (wait !== null) {
      ctx.set('retry-after', String(wait));
      refuse(ctx, 429, 'too many registrations from this address; try again later');
      return;
    }
    const length = ctx.request.length;
    if (length === undefined) {
      refuse(ctx, 411, 'the registration request must declare its length');
      return;
    }
    if (length > REGISTRATION_BODY_LIMIT_BYTES) {
      refuse(
        ctx,
        413,
        `the registration request must be at most ${REGISTRATION_BODY_LIMIT_BYTES} bytes`,
      );
      return;
    }
    await registrationOrigin.run(origin, next);
  });
}

/** The parts of Koa's context a refusal writes. */
interface Answer {
  set(field: string, value: string): void;
  status: number;
  body: unknown;
}

function refuse(ctx: Answer, status: number, description: string): void {
  ctx.set('cache-control', 'no-store');
  ctx.status = status;
  ctx.body = { error: 'invalid_request', error_description: description };
}
