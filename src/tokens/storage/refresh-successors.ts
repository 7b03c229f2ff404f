import { Injectable } from '@nestjs/common';
import { createHmac, createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';
import { AppConfig } from '../../config/app-config.js';
import { hashRefreshToken } from './refresh-token-value.js';

/** HKDF's `info`: this key is used for nothing else derived from the signing secret. */
const KEY_LABEL = 'keygate-refresh-successor-v1';
/** Bytes of the successor, as many as a random refresh token has. */
const SUCCESSOR_BYTES = 32;
/** Bytes of the access token's id, a UUID's. */
const ACCESS_TOKEN_ID_BYTES = 16;

/** What a rotation issues in place of a presented token, derived from it. */
export interface DerivedSuccessor {
  /** The successor refresh token, base64url of 32 bytes like a random one. */
  readonly raw: string;
  /** Its digest, the only form stored. */
  readonly hash: Buffer;
  /** The `jti` of the access token issued beside it, so that both can be issued again alike. */
  readonly accessTokenId: string;
}

/**
 * Jwt__RefreshRetryWindowSeconds (decision 0040). While the window is on, a rotation does not
 * draw its successor at random: it derives it from the presented token with an HMAC under a key
 * derived (HKDF-SHA256) from the signing secret, and the access token's `jti` from the same
 * HMAC's next bytes (one HMAC-SHA512 costs less than two HMAC-SHA256 objects). So when the
 * same predecessor comes back within the window (its answer was lost), the same pair can be
 * issued again without the successor ever being stored but as its digest: the presented value
 * is the only input besides the server's key, and the stored digest proves the rotation made
 * exactly that successor. A database copy without the secret still holds nothing usable.
 */
@Injectable()
export class RefreshSuccessors {
  /** The window in milliseconds; 0 when off (successors are then random, as before). */
  readonly windowMs: number;
  /** One key per configured signing secret, the current one first; none while off. */
  private readonly keys: readonly KeyObject[];

  constructor(config: AppConfig) {
    this.windowMs = config.jwt.refreshRetryWindowSeconds * 1000;
    this.keys =
      this.windowMs > 0
        ? [config.jwt.secret, ...config.jwt.previousSecrets].map((secret) =>
            createSecretKey(Buffer.from(hkdfSync('sha256', secret, '', KEY_LABEL, 32))),
          )
        : [];
  }

  /** Whether rotations derive their successors, so that a retry can be answered. */
  get enabled(): boolean {
    return this.windowMs > 0;
  }

  /** The successor a rotation of `presented` issues now: under the current secret's key. */
  successorOf(presented: string): DerivedSuccessor {
    if (this.keys.length === 0) {
      throw new Error('Successors are derived only while Jwt__RefreshRetryWindowSeconds is on');
    }
    return derive(this.keys[0], presented);
  }

  /**
   * The successors a rotation of `presented` may have issued: one per configured secret, the
   * current one first, so that a retry still matches just after the secret was rolled.
   */
  candidatesOf(presented: string): DerivedSuccessor[] {
    return this.keys.map((key) => derive(key, presented));
  }
}

/** HMAC-SHA512 of the presented value: its first 32 bytes the successor, the next 16 the id. */
function derive(key: KeyObject, presented: string): DerivedSuccessor {
  const mac = createHmac('sha512', key).update(presented).digest();
  const raw = mac.subarray(0, SUCCESSOR_BYTES).toString('base64url');
  const id = mac.subarray(SUCCESSOR_BYTES, SUCCESSOR_BYTES + ACCESS_TOKEN_ID_BYTES);
  return { raw, hash: hashRefreshToken(raw), accessTokenId: uuidOf(id) };
}

/**
 * A UUID of version 8 (RFC 9562: custom, here derived rather than random) from 16 bytes,
 * shaped like the random `jti`s so that verifiers see one format.
 */
function uuidOf(bytes: Buffer): string {
  const b = Buffer.from(bytes);
  b[6] = (b[6] & 0x0f) | 0x80;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
