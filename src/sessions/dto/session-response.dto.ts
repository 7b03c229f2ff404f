import type { RefreshToken } from '../../tokens/entities/refresh-token.entity.js';

/** One active session: the chain of refresh tokens that rotation made from one login. */
export class SessionResponseDto {
  /**
   * The session id, shared by every refresh token of the chain.
   * @example "9b2d6f7e-1c1a-4c55-8f3e-2f7b0d1e6a11"
   */
  readonly id: string;

  /**
   * When the session started (the login or registration), ISO 8601 UTC.
   * @example "2026-01-01T09:00:00.000Z"
   */
  readonly createdAt: string;

  /**
   * When the session was last used: when its current refresh token was issued, by the login or
   * the last refresh. ISO 8601 UTC. @example "2026-01-02T17:45:12.345Z"
   */
  readonly lastUsedAt: string;

  /** Client IP of the request that last used the session. @example "203.0.113.7" */
  readonly ip: string;

  /**
   * User-Agent of the request that last used the session, at most 256 characters; null when it
   * sent none. @example "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0"
   */
  readonly userAgent: string | null;

  /**
   * True for the session whose current refresh token the request named in `X-Refresh-Token`.
   * @example true
   */
  readonly current: boolean;

  /** `token` is the newest token of its session. */
  static from(token: RefreshToken, current: boolean): SessionResponseDto {
    return {
      id: token.familyId,
      createdAt: token.sessionStartedAt.toISOString(),
      lastUsedAt: token.createdAt.toISOString(),
      ip: token.createdByIp,
      userAgent: token.createdByUserAgent,
      current,
    };
  }
}
