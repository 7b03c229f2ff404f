import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { jwtVerify } from 'jose';
import { Strategy } from 'passport-jwt';
import { bearerCredentials } from '../common/bearer/bearer-credentials.js';
import type { AccessTokenClaims } from '../common/decorators/current-user.decorator.js';
import { JWT_ALGORITHM } from '../common/jwt/jwt-key.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/app-config.js';
import { KeySet, type VerificationKey } from '../keys/key-set.js';
import { VerifiedTokenCache } from './verified-token-cache.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A compact JWS: three base64url parts. Any other credentials are no token. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

interface RequestWithHeaders {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

type PassportRequest = Parameters<Strategy['authenticate']>[0];

/** Spec §5: the bearer credentials (bearerCredentials, the rule every guard shares), a compact JWS. */
export function bearerToken(request: RequestWithHeaders): string | null {
  const token = bearerCredentials(request.headers.authorization);
  return token !== null && COMPACT_JWS.test(token) ? token : null;
}

/**
 * Verifies bearer tokens: header `typ` JWT, no `crit`, no key carried or pointed to by the header
 * (`jku`, `jwk`, `x5u`, `x5c`), a key chosen by the token's `kid` in the key set (KeySet: the
 * secrets of the configuration, the asymmetric keys of `signing_keys`), and only that key's
 * algorithm, so no token can pick how it is checked; issuer and audience as configured. HS256
 * tokens go through passport-jwt as they always did; the asymmetric ones through jose (decision
 * 0036). Times are checked here against the injected Clock, because jsonwebtoken would use the
 * wall clock; `exp` and `iat` are therefore required. A token verified once is remembered
 * (VerifiedTokenCache) with the key that verified it, and only its expiry, and that the key
 * still verifies, are checked when it comes back. Whether its account may still act is the
 * guard's to check, on every request.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy) {
  private readonly clockSkewSeconds: number;
  /** The lifetime this service gives its tokens, plus the tolerance. */
  private readonly maxLifetimeSeconds: number;
  private readonly verified = new VerifiedTokenCache();

  private readonly issuer: string;
  private readonly audience: string;

  constructor(
    config: AppConfig,
    private readonly clock: Clock,
    private readonly keys: KeySet,
  ) {
    super({
      jwtFromRequest: bearerToken,
      secretOrKeyProvider: keyProvider(keys),
      algorithms: [JWT_ALGORITHM],
      issuer: config.jwt.issuer,
      audience: config.jwt.audience,
      ignoreExpiration: true,
      passReqToCallback: true,
    });
    this.clockSkewSeconds = config.jwt.clockSkewSeconds;
    this.issuer = config.jwt.issuer;
    this.audience = config.jwt.audience;
    this.maxLifetimeSeconds = config.jwt.accessTokenExpiryMinutes * 60 + this.clockSkewSeconds;
  }

  override authenticate(request: PassportRequest, options?: unknown): void {
    const known = this.rememberedClaims(request);
    if (known === null) {
      this.fail(401);
      return;
    }
    if (known !== undefined) {
      this.success(known);
      return;
    }
    const token = bearerToken(request);
    const key = token === null ? undefined : keyFor(this.keys, headerOf(token));
    if (token === null || key === undefined || key.algorithm === JWT_ALGORITHM) {
      // HS256 exactly as before; passport-jwt refuses a missing token or one without a key.
      super.authenticate(request, options);
      return;
    }
    this.verifyAsymmetric(request, token, key).then(
      (claims) => (claims === null ? this.fail(401) : this.success(claims)),
      () => this.fail(401),
    );
  }

  /** jose, with the key the `kid` names and only its algorithm; then the claims as validate reads them. */
  private async verifyAsymmetric(
    request: RequestWithHeaders,
    token: string,
    key: VerificationKey,
  ): Promise<AccessTokenClaims | null> {
    const { payload } = await jwtVerify(token, key.key, {
      algorithms: [key.algorithm],
      issuer: this.issuer,
      audience: this.audience,
      typ: 'JWT',
      currentDate: this.clock.now(),
      clockTolerance: this.clockSkewSeconds,
    });
    return this.validate(request, payload);
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
    if (!this.keys.accepts(known.kid)) {
      // Its key was retired since: verified again, the token is refused.
      this.verified.forget(token);
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
    const kid = token === null ? undefined : this.keys.verificationKey(headerOf(token).kid)?.kid;
    if (token !== null && kid !== undefined) {
      this.verified.remember(token, { claims, exp, kid });
    }
    return claims;
  }

  private hasExpired(exp: number): boolean {
    return this.clock.now().getTime() / 1000 >= exp + this.clockSkewSeconds;
  }
}

type KeyCallback = (error: Error | null, key?: string | Buffer) => void;

/** Header members that carry or point to a key: the token would choose what verifies it. */
const KEY_CARRYING_MEMBERS = ['jku', 'jwk', 'x5u', 'x5c'] as const;

interface TokenHeader {
  readonly kid?: unknown;
  readonly typ?: unknown;
  readonly alg?: unknown;
}

/**
 * The key that verifies a token with this header, or undefined when none may: a header this
 * service would not write (a `typ` other than `JWT`, SPEC §5; any `crit` member, RFC 7515
 * §4.1.11, as this service understands no extension; a key carried or pointed to), an unknown or
 * retired `kid`, or an `alg` other than the key's own (an HS256 token whose `kid` names a public
 * key, the key-confusion attack, included).
 */
function keyFor(keys: KeySet, header: TokenHeader): VerificationKey | undefined {
  if (
    header.typ !== 'JWT' ||
    'crit' in header ||
    KEY_CARRYING_MEMBERS.some((member) => member in header)
  ) {
    return undefined;
  }
  const key = keys.verificationKey(header.kid);
  return key !== undefined && header.alg === key.algorithm ? key : undefined;
}

/**
 * Hands passport-jwt the HS256 secret the header names (see keyFor); any other header fails the
 * token. passport-jwt hands the key straight to jsonwebtoken, which accepts a KeyObject; its
 * typings only list string and Buffer.
 */
function keyProvider(keys: KeySet) {
  return (_request: unknown, rawToken: string, done: KeyCallback): void => {
    const key = keyFor(keys, headerOf(rawToken));
    if (key === undefined || key.algorithm !== JWT_ALGORITHM) {
      done(new Error('The token names no key that may verify it'));
    } else {
      done(null, key.key as unknown as Buffer);
    }
  };
}

function headerOf(rawToken: string): TokenHeader {
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
