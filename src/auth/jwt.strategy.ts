import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { KeyObject } from 'node:crypto';
import { Strategy } from 'passport-jwt';
import type { AccessTokenClaims } from '../common/decorators/current-user.decorator.js';
import { JWT_ALGORITHM, VerificationKeys } from '../common/jwt/jwt-key.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/app-config.js';
import { VerifiedTokenCache } from './verified-token-cache.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Spec §5: exactly `Bearer`, one space, then a compact JWS. Anything else carries no token. */
const BEARER = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/;

interface RequestWithHeaders {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

type PassportRequest = Parameters<Strategy['authenticate']>[0];

export function bearerToken(request: RequestWithHeaders): string | null {
  const header = request.headers.authorization;
  return typeof header === 'string' ? (BEARER.exec(header)?.[1] ?? null) : null;
}

/**
 * Verifies bearer tokens: HS256 only, header `typ` JWT and no `crit`, a key chosen by the
 * token's `kid` among the current and previous secrets, issuer and audience as configured.
 * Times are checked here against the injected Clock, because jsonwebtoken would use the wall
 * clock; `exp` and `iat` are therefore required. A token verified once is remembered
 * (VerifiedTokenCache), and only its expiry is checked when it comes back: nothing else about it
 * can change. Whether its account may still act is the guard's to check, on every request.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy) {
  private readonly clockSkewSeconds: number;
  /** The lifetime this service gives its tokens, plus the tolerance. */
  private readonly maxLifetimeSeconds: number;
  private readonly verified = new VerifiedTokenCache();

  constructor(
    config: AppConfig,
    private readonly clock: Clock,
  ) {
    super({
      jwtFromRequest: bearerToken,
      secretOrKeyProvider: keyProvider(new VerificationKeys(config.jwt)),
      algorithms: [JWT_ALGORITHM],
      issuer: config.jwt.issuer,
      audience: config.jwt.audience,
      ignoreExpiration: true,
      passReqToCallback: true,
    });
    this.clockSkewSeconds = config.jwt.clockSkewSeconds;
    this.maxLifetimeSeconds = config.jwt.accessTokenExpiryMinutes * 60 + this.clockSkewSeconds;
  }

  override authenticate(request: PassportRequest, options?: unknown): void {
    const known = this.rememberedClaims(request);
    if (known === undefined) {
      super.authenticate(request, options);
    } else if (known === null) {
      this.fail(401);
    } else {
      this.success(known);
    }
  }

  /**
   * The claims of the request's bearer token if it was verified before and has not expired
   * since; null if it was verified before and has expired (it is forgotten, and refused);
   * undefined if it was never verified here, or there is none: only passport-jwt can tell.
   * The guard asks first, so a known token skips passport's per-request machinery.
   */
  rememberedClaims(request: RequestWithHeaders): AccessTokenClaims | null | undefined {
    const token = bearerToken(request);
    const known = token === null ? undefined : this.verified.get(token);
    if (token === null || known === undefined) {
      return undefined;
    }
    if (this.hasExpired(known.exp)) {
      this.verified.forget(token);
      return null;
    }
    return known.claims;
  }

  /**
   * Called by passport-jwt with a token it verified; returning null rejects the token. Besides
   * expiry, a token issued in the future or living longer than this service issues them is
   * refused: neither can come from this service, so the secret has leaked or a clock is wrong.
   */
  validate(
    request: RequestWithHeaders,
    payload: Record<string, unknown>,
  ): AccessTokenClaims | null {
    const { sub, sid, email, jti, exp, iat } = payload;
    if (typeof sub !== 'string' || !UUID.test(sub)) {
      return null;
    }
    if (sid !== undefined && (typeof sid !== 'string' || !UUID.test(sid))) {
      return null;
    }
    if (typeof email !== 'string' || typeof jti !== 'string') {
      return null;
    }
    if (typeof exp !== 'number' || typeof iat !== 'number') {
      return null;
    }
    const nowSeconds = this.clock.now().getTime() / 1000;
    if (iat > nowSeconds + this.clockSkewSeconds || exp - iat > this.maxLifetimeSeconds) {
      return null;
    }
    if (this.hasExpired(exp)) {
      return null;
    }
    const claims = { sub, ...(sid === undefined ? {} : { sid }), email, jti };
    const token = bearerToken(request);
    if (token !== null) {
      this.verified.remember(token, { claims, exp });
    }
    return claims;
  }

  private hasExpired(exp: number): boolean {
    return this.clock.now().getTime() / 1000 >= exp + this.clockSkewSeconds;
  }
}

type KeyCallback = (error: Error | null, key?: string | Buffer) => void;

/**
 * Picks the key by the token's header; an unknown `kid` fails the token, and so does a header
 * this service would not write: a `typ` other than `JWT` (SPEC §5), or any `crit` member (RFC
 * 7515 §4.1.11: the extensions it names must be understood, and this service understands none).
 * passport-jwt hands the key straight to jsonwebtoken, which accepts a KeyObject; its typings
 * only list string and Buffer.
 */
function keyProvider(keys: VerificationKeys) {
  return (_request: unknown, rawToken: string, done: KeyCallback): void => {
    const header = headerOf(rawToken);
    if (header.typ !== 'JWT' || 'crit' in header) {
      done(new Error('The token header is not one this service writes'));
      return;
    }
    const key: KeyObject | undefined = keys.forHeader(header);
    if (key === undefined) {
      done(new Error('The token was signed with an unknown key'));
    } else {
      done(null, key as unknown as Buffer);
    }
  };
}

function headerOf(rawToken: string): { readonly kid?: unknown; readonly typ?: unknown } {
  try {
    const header: unknown = JSON.parse(
      Buffer.from(rawToken.slice(0, rawToken.indexOf('.')), 'base64url').toString('utf8'),
    );
    return typeof header === 'object' && header !== null && !Array.isArray(header) ? header : {};
  } catch {
    // jsonwebtoken rejects the malformed token on its own.
    return {};
  }
}
