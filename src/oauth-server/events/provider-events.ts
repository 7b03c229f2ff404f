import { Injectable } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { UNKNOWN_CLIENT_IP } from '../../common/network/client-address.js';
import type { RequestOrigin } from '../../common/request-origin/request-origin.js';
import type { AuthEvent } from '../../events/auth-event.js';
import { AuthEvents } from '../../events/auth-events.js';
import { requestOrigins } from './request-origins.js';

/** The library's context of the request in progress (for what its storage tells). */
const currentContext = new AsyncLocalStorage<KoaContextWithOIDC>();

/** The event writes each request of the library waits for, by its context. */
const pendingWrites = new WeakMap<object, Promise<void>[]>();

/**
 * The token endpoint's grant types that issue tokens to a person's application, by the name
 * events and metrics give them (the device grant's is a URN, RFC 8628 §3.4). The client
 * credentials grant has no person, and no event.
 */
const GRANT_TYPES: ReadonlyMap<string, string> = new Map([
  ['authorization_code', 'authorization_code'],
  ['refresh_token', 'refresh_token'],
  ['urn:ietf:params:oauth:grant-type:device_code', 'device_code'],
]);

/**
 * Turns what the protocol library tells (its events) into Keygate's events: tokens issued at the
 * token endpoint (`grant.success`), and a rotated refresh token presented again (`grant.revoked`
 * while the token endpoint redeems a refresh token: the library revokes the grant then). The
 * library writes its tokens itself, so an event is written right after, in a unit of its own;
 * the answer waits for it (a middleware around the library), so no answer leaves before its
 * audit row committed, as with Keygate's own events.
 */
@Injectable()
export class ProviderEvents {
  constructor(private readonly events: AuthEvents) {}

  install(provider: Provider): void {
    provider.use(async (ctx, next) => {
      await currentContext.run(ctx as KoaContextWithOIDC, next);
      const pending = pendingWrites.get(ctx);
      if (pending !== undefined) {
        await Promise.all(pending);
      }
    });
    provider.on('grant.success', (ctx: KoaContextWithOIDC) => {
      const event = this.tokenIssued(ctx);
      if (event !== null) {
        this.track(ctx, event);
      }
    });
    provider.on('grant.revoked', (ctx: KoaContextWithOIDC) => {
      const event = this.reuseDetected(ctx);
      if (event !== null) {
        this.track(ctx, event);
      }
    });
  }

  /**
   * The storage lost the race for a code or a refresh token to a use at the same moment (on this
   * instance or another): it revoked the grant, as the library does for a reuse it sees. For a
   * refresh token that is a reuse too.
   */
  lostRace(kind: string): void {
    const ctx = currentContext.getStore();
    if (kind !== 'RefreshToken' || ctx === undefined) {
      return;
    }
    const event = this.reuseDetected(ctx);
    if (event !== null) {
      this.track(ctx, event);
    }
  }

  private tokenIssued(ctx: KoaContextWithOIDC): AuthEvent | null {
    const grantType = GRANT_TYPES.get(textOf(ctx.oidc.params?.grant_type));
    const clientId = ctx.oidc.client?.clientId;
    const accountId = accountIdOf(ctx);
    if (grantType === undefined || clientId === undefined || accountId === undefined) {
      return null;
    }
    const body = ctx.body as { refresh_token?: unknown } | undefined;
    return {
      type: 'oauth_token_issued',
      userId: accountId,
      clientId,
      grantType,
      hasRefreshToken: typeof body?.refresh_token === 'string',
    };
  }

  private reuseDetected(ctx: KoaContextWithOIDC): AuthEvent | null {
    const clientId = ctx.oidc.client?.clientId;
    const accountId = ctx.oidc.entities.RefreshToken?.accountId;
    if (
      ctx.oidc.route !== 'token' ||
      textOf(ctx.oidc.params?.grant_type) !== 'refresh_token' ||
      clientId === undefined ||
      accountId === undefined
    ) {
      return null;
    }
    return { type: 'oauth_refresh_reuse_detected', userId: accountId, clientId };
  }

  private track(ctx: KoaContextWithOIDC, event: AuthEvent): void {
    const recorded = this.events.recordAlone(event, originOf(ctx));
    // Awaited by the middleware; this handler only keeps Node from calling it unhandled.
    recorded.catch(() => undefined);
    pendingWrites.set(ctx, [...(pendingWrites.get(ctx) ?? []), recorded]);
  }
}

function accountIdOf(ctx: KoaContextWithOIDC): string | undefined {
  const { entities } = ctx.oidc;
  return (
    entities.Account?.accountId ??
    entities.AuthorizationCode?.accountId ??
    entities.DeviceCode?.accountId ??
    entities.RefreshToken?.accountId
  );
}

function originOf(ctx: KoaContextWithOIDC): RequestOrigin {
  return (
    requestOrigins.get(ctx.req) ?? { ip: UNKNOWN_CLIENT_IP, userAgent: null, requestId: 'unknown' }
  );
}

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
