// Compact JWS tokens crafted and read by hand, without the JWT library the service uses.
import { createHmac, randomUUID } from 'node:crypto';

/** The access token claims the service issues (SPEC): issuer, audience and a 15-minute lifetime. */
export const ACCESS_TOKEN_ISSUER = 'keygate';
export const ACCESS_TOKEN_AUDIENCE = 'keygate-clients';
export const ACCESS_TOKEN_LIFETIME_S = 15 * 60;

export type HmacAlgorithm = 'HS256' | 'HS384' | 'HS512';

const HMAC_DIGEST: Record<HmacAlgorithm, string> = {
  HS256: 'sha256',
  HS384: 'sha384',
  HS512: 'sha512',
};

export interface DecodedJwt {
  readonly header: Record<string, unknown>;
  readonly payload: Record<string, unknown>;
}

/** base64url of the JSON text of `value`: a header or payload segment. */
export function encodeSegment(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

function decodeSegment(segment: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** Decodes the header and payload of a compact JWS without verifying it. */
export function decodeJwt(token: string): DecodedJwt {
  const [header = '', payload = ''] = token.split('.');
  return { header: decodeSegment(header), payload: decodeSegment(payload) };
}

/** The base64url HMAC of `signingInput` (`header.payload`) under `secret`. */
function hmacSignature(signingInput: string, secret: string, algorithm: HmacAlgorithm): string {
  return createHmac(HMAC_DIGEST[algorithm], secret).update(signingInput).digest('base64url');
}

/**
 * A compact JWS: `base64url(header).base64url(payload)` and its HMAC under `secret`, computed
 * with `algorithm` whatever the header names.
 */
export function signJwt(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  secret: string,
  algorithm: HmacAlgorithm = 'HS256',
): string {
  const signingInput = `${encodeSegment(header)}.${encodeSegment(payload)}`;
  return `${signingInput}.${hmacSignature(signingInput, secret, algorithm)}`;
}

/** An `alg: none` token, with no signature unless one is given. */
export function unsignedJwt(payload: Record<string, unknown>, signature = ''): string {
  return `${encodeSegment({ alg: 'none', typ: 'JWT' })}.${encodeSegment(payload)}.${signature}`;
}

/** `token` with its payload replaced after signing: the header and signature are kept. */
export function withPayload(token: string, payload: Record<string, unknown>): string {
  const [header, , signature] = token.split('.');
  return `${header}.${encodeSegment(payload)}.${signature}`;
}

/** True when the token's signature is the HMAC (HS256 unless told) of its header and payload. */
export function isSignedWith(
  token: string,
  secret: string,
  algorithm: HmacAlgorithm = 'HS256',
): boolean {
  const [header, payload, signature] = token.split('.');
  return signature === hmacSignature(`${header}.${payload}`, secret, algorithm);
}

/**
 * Claims like the ones the service issues to `user`, valid at `now`, with the default issuer and
 * audience; `overrides` replace claims and `removed` names claims to leave out.
 */
export function accessTokenClaims(
  user: { readonly id: string; readonly email: string },
  now: Date,
  overrides: Record<string, unknown> = {},
  removed: readonly string[] = [],
): Record<string, unknown> {
  const iat = Math.floor(now.getTime() / 1000);
  const all: Record<string, unknown> = {
    sub: user.id,
    email: user.email.toLowerCase(),
    jti: randomUUID(),
    iat,
    exp: iat + ACCESS_TOKEN_LIFETIME_S,
    iss: ACCESS_TOKEN_ISSUER,
    aud: ACCESS_TOKEN_AUDIENCE,
    ...overrides,
  };
  return Object.fromEntries(Object.entries(all).filter(([key]) => !removed.includes(key)));
}
