import { createHmac } from 'node:crypto';
import { jwtVerify, type JWTHeaderParameters } from 'jose';

/** What your API must know of Keygate: the values of Keygate's own settings. */
export interface KeygateSettings {
  /** Jwt__SecretKey, then every key of Jwt__PreviousSecretKeys. */
  readonly secrets: readonly string[];
  /** Jwt__Issuer. */
  readonly issuer: string;
  /** Jwt__Audience. */
  readonly audience: string;
}

/** Whom a request is for, read from a verified access token. */
export interface KeygateIdentity {
  readonly userId: string;
  /** The session the token belongs to (`sid`); absent from tokens of older Keygate versions. */
  readonly sessionId: string | undefined;
  readonly email: string;
}

/** The `kid` Keygate writes for a secret: it names the secret without revealing it. */
export function keyIdOf(secret: string): string {
  return createHmac('sha256', secret).update('keygate-jwt-kid-v1').digest('base64url').slice(0, 16);
}

/**
 * Verifies Keygate access tokens: HS256 only, with the secret the token's `kid` names, and its
 * issuer, audience and expiry. Resolves to null for any token that fails, whatever the reason.
 */
export function keygateVerifier(
  settings: KeygateSettings,
): (token: string) => Promise<KeygateIdentity | null> {
  const keys = new Map(
    settings.secrets.map((secret) => [keyIdOf(secret), new TextEncoder().encode(secret)]),
  );
  const keyFor = (header: JWTHeaderParameters): Uint8Array => {
    const key = header.kid === undefined ? undefined : keys.get(header.kid);
    if (key === undefined) {
      throw new Error('The token names no secret of this API');
    }
    return key;
  };
  return async (token) => {
    try {
      const { payload } = await jwtVerify(token, keyFor, {
        algorithms: ['HS256'],
        issuer: settings.issuer,
        audience: settings.audience,
        requiredClaims: ['sub', 'exp'],
      });
      const { sub, sid, email } = payload;
      if (typeof sub !== 'string' || typeof email !== 'string') {
        return null;
      }
      return { userId: sub, sessionId: typeof sid === 'string' ? sid : undefined, email };
    } catch {
      return null;
    }
  };
}

/**
 * Asks Keygate whether the token's session is still active, for the requests where a logout must
 * count at once rather than when the token expires. Needs Jwt__RequireActiveSession=true on
 * Keygate, and costs a round trip to it.
 */
export async function isSessionActive(keygateUrl: string, token: string): Promise<boolean> {
  const response = await fetch(new URL('/api/auth/me', keygateUrl), {
    headers: { authorization: `Bearer ${token}` },
  });
  return response.ok;
}
