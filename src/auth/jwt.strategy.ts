import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { KeyObject } from 'node:crypto';
import { Strategy } from 'passport-jwt';
import type { AccessTokenClaims } from '../common/decorators/current-user.decorator.js';
import { jwtKey, JWT_ALGORITHM } from '../common/jwt/jwt-key.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/app-config.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Spec §5: exactly `Bearer`, one space, then a compact JWS. Anything else carries no token. */
const BEARER = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/;

interface RequestWithHeaders {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export function bearerToken(request: RequestWithHeaders): string | null {
  const header = request.headers.authorization;
  return typeof header === 'string' ? (BEARER.exec(header)?.[1] ?? null) : null;
}

/**
 * Verifies bearer tokens: HS256 only, issuer and audience as configured. Expiry is checked in
 * `validate` against the injected Clock, because jsonwebtoken would use the wall clock; `exp` is
 * therefore required there.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy) {
  private readonly clockSkewSeconds: number;

  constructor(
    config: AppConfig,
    private readonly clock: Clock,
  ) {
    super({
      jwtFromRequest: bearerToken,
      secretOrKeyProvider: keyProvider(jwtKey(config.jwt)),
      algorithms: [JWT_ALGORITHM],
      issuer: config.jwt.issuer,
      audience: config.jwt.audience,
      ignoreExpiration: true,
    });
    this.clockSkewSeconds = config.jwt.clockSkewSeconds;
  }

  /** Called with the verified payload; returning null rejects the token. */
  validate(payload: Record<string, unknown>): AccessTokenClaims | null {
    const { sub, email, jti, exp } = payload;
    if (typeof sub !== 'string' || !UUID.test(sub)) {
      return null;
    }
    if (typeof email !== 'string' || typeof jti !== 'string' || typeof exp !== 'number') {
      return null;
    }
    const nowSeconds = this.clock.now().getTime() / 1000;
    if (nowSeconds >= exp + this.clockSkewSeconds) {
      return null;
    }
    return { sub, email, jti };
  }
}

type KeyCallback = (error: null, key: string | Buffer) => void;

/**
 * passport-jwt hands the key straight to jsonwebtoken, which accepts a KeyObject; its typings
 * only list string and Buffer.
 */
function keyProvider(key: KeyObject) {
  return (_request: unknown, _token: unknown, done: KeyCallback): void =>
    done(null, key as unknown as Buffer);
}
