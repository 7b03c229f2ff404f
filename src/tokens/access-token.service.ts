import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/app-config.js';
import { signCompactJws } from '../keys/compact-jws.js';
import { KeySet } from '../keys/key-set.js';
import type { User } from '../users/entities/user.entity.js';
import { RandomSource } from '../common/random/random-source.js';
import { PASSWORD_ONLY, type AuthMethod } from './auth-methods.js';

export interface SignedAccessToken {
  readonly token: string;
  readonly expiresAt: Date;
}

/**
 * What makes a token the same again when it is signed twice for one rotation (a retry answered
 * within Jwt__RefreshRetryWindowSeconds): its issue instant and its id, instead of the clock's
 * now and a random id. HS256, RS256 and EdDSA are deterministic, so equal claims sign to the
 * identical string; an ES256 signature differs each time, over the same claims.
 */
export interface AccessTokenIssue {
  readonly at: Date;
  readonly id: string;
}

/**
 * Issues access tokens: JWTs whose `exp` and `iat` come from the Clock, and whose `sid` names the
 * session (the refresh-token family) they were issued for, so that a resource can ask whether
 * that session is still active. `amr` (RFC 8176) says how the session was authenticated.
 * HS256 under Jwt__SecretKey (the interface) through @nestjs/jwt, unchanged; with an asymmetric
 * Jwt__SigningAlgorithm, node:crypto signs with the key set's current key (jsonwebtoken has no
 * EdDSA, and jose's WebCrypto path cost a refresh a tenth of its throughput; decision 0036).
 * jose verifies them.
 */
@Injectable()
export class AccessTokenService {
  private readonly lifetimeSeconds: number;
  private readonly issuer: string;
  private readonly audience: string;

  constructor(
    private readonly jwt: JwtService,
    private readonly clock: Clock,
    private readonly random: RandomSource,
    private readonly keySet: KeySet,
    config: AppConfig,
  ) {
    this.lifetimeSeconds = config.jwt.accessTokenExpiryMinutes * 60;
    this.issuer = config.jwt.issuer;
    this.audience = config.jwt.audience;
  }

  sign(
    user: Pick<User, 'id' | 'email' | 'emailVerifiedAt'>,
    sessionId: string,
    authMethods: readonly AuthMethod[] = PASSWORD_ONLY,
    issue?: AccessTokenIssue,
  ): SignedAccessToken {
    const iat = Math.floor((issue?.at ?? this.clock.now()).getTime() / 1000);
    const exp = iat + this.lifetimeSeconds;
    const claims = {
      sub: user.id,
      sid: sessionId,
      email: user.email,
      // OpenID Connect's claim: whether `email` was proven by a link mailed to it.
      email_verified: user.emailVerifiedAt !== null,
      amr: authMethods,
      jti: issue?.id ?? this.random.uuid(),
      iat,
      exp,
    };
    const signer = this.keySet.signer();
    const token =
      signer === null
        ? this.jwt.sign(claims)
        : signCompactJws(
            { alg: signer.algorithm, typ: 'JWT', kid: signer.kid },
            { ...claims, iss: this.issuer, aud: this.audience },
            signer.privateKey,
          );
    return { token, expiresAt: new Date(exp * 1000) };
  }
}
