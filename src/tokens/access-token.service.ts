import { Injectable } from '@nestjs/common';
import { createHmac, type KeyObject } from 'node:crypto';
import { Clock } from '../common/time/clock.js';
import { JWT_ALGORITHM, jwtKey } from '../common/jwt/jwt-key.js';
import { AppConfig, type JwtConfig } from '../config/app-config.js';
import type { User } from '../users/entities/user.entity.js';
import { RandomSource } from '../common/random/random-source.js';
import { PASSWORD_ONLY, type AuthMethod } from './auth-methods.js';

export interface SignedAccessToken {
  readonly token: string;
  readonly expiresAt: Date;
}

/** The claims an access token carries besides the issuer and audience, in their order. */
export interface AccessTokenClaims {
  readonly sub: string;
  readonly sid: string;
  readonly email: string;
  readonly email_verified: boolean;
  readonly amr: readonly AuthMethod[];
  readonly jti: string;
  readonly iat: number;
  readonly exp: number;
}

/**
 * Signs HS256 JWTs with node:crypto's HMAC directly (decision 0032): the same bytes jsonwebtoken's
 * `sign` gives for these claims and the service's options (header `alg`, `typ`, `kid`; the claims
 * in order, then `aud` and `iss`), without its per-call validation of options and payload against
 * a schema (5–7 % of a refresh's CPU). access-token.service.spec.ts compares the two byte for byte.
 * Verification stays with passport-jwt and jsonwebtoken.
 */
export class AccessTokenSigner {
  private readonly header: string;
  private readonly key: KeyObject;

  constructor(private readonly config: Pick<JwtConfig, 'secret' | 'issuer' | 'audience'>) {
    const { kid, key } = jwtKey(config.secret);
    this.key = key;
    this.header = base64url(JSON.stringify({ alg: JWT_ALGORITHM, typ: 'JWT', kid }));
  }

  sign(claims: AccessTokenClaims): string {
    const payload = base64url(
      JSON.stringify({ ...claims, aud: this.config.audience, iss: this.config.issuer }),
    );
    const signingInput = `${this.header}.${payload}`;
    return `${signingInput}.${createHmac('sha256', this.key).update(signingInput).digest('base64url')}`;
  }
}

function base64url(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}

/**
 * Issues access tokens: HS256 JWTs whose `exp` and `iat` come from the Clock, and whose `sid`
 * names the session (the refresh-token family) they were issued for, so that a resource can ask
 * whether that session is still active. `amr` (RFC 8176) says how the session was authenticated.
 */
@Injectable()
export class AccessTokenService {
  private readonly lifetimeSeconds: number;
  private readonly signer: AccessTokenSigner;

  constructor(
    private readonly clock: Clock,
    private readonly random: RandomSource,
    config: AppConfig,
  ) {
    this.lifetimeSeconds = config.jwt.accessTokenExpiryMinutes * 60;
    this.signer = new AccessTokenSigner(config.jwt);
  }

  sign(
    user: Pick<User, 'id' | 'email' | 'emailVerifiedAt'>,
    sessionId: string,
    authMethods: readonly AuthMethod[] = PASSWORD_ONLY,
  ): SignedAccessToken {
    const iat = Math.floor(this.clock.now().getTime() / 1000);
    const exp = iat + this.lifetimeSeconds;
    const token = this.signer.sign({
      sub: user.id,
      sid: sessionId,
      email: user.email,
      // OpenID Connect's claim: whether `email` was proven by a link mailed to it.
      email_verified: user.emailVerifiedAt !== null,
      amr: authMethods,
      jti: this.random.uuid(),
      iat,
      exp,
    });
    return { token, expiresAt: new Date(exp * 1000) };
  }
}
