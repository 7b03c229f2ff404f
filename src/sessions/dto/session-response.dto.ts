import { ApiProperty } from '@nestjs/swagger';
import type { ListedSession } from '../../tokens/entities/session.entity.js';

/** The example user's session in this browser. */
export const SESSION_RESPONSE_EXAMPLE = {
  id: '9b2d6f7e-1c1a-4c55-8f3e-2f7b0d1e6a11',
  createdAt: '2026-01-01T09:00:00.000Z',
  lastUsedAt: '2026-01-02T17:45:12.345Z',
  ip: '203.0.113.7',
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0',
  current: true,
} as const satisfies SessionResponseDto;

/** One active session: the chain of refresh tokens that rotation made from one login. */
export class SessionResponseDto {
  /**
   * The session id: shared by every refresh token of the chain, and the `sid` claim of the
   * access tokens issued with them.
   */
  @ApiProperty({ format: 'uuid', example: SESSION_RESPONSE_EXAMPLE.id })
  readonly id: string;

  /** When the session started (the login or registration), ISO 8601 UTC. */
  @ApiProperty({ format: 'date-time', example: SESSION_RESPONSE_EXAMPLE.createdAt })
  readonly createdAt: string;

  /**
   * When the session was last used: when its current refresh token was issued, by the login or
   * the last refresh. ISO 8601 UTC.
   */
  @ApiProperty({ format: 'date-time', example: SESSION_RESPONSE_EXAMPLE.lastUsedAt })
  readonly lastUsedAt: string;

  /** Client IP of the request that last used the session. */
  @ApiProperty({ example: SESSION_RESPONSE_EXAMPLE.ip })
  readonly ip: string;

  /**
   * User-Agent of the request that last used the session, at most 256 characters; null when it
   * sent none.
   */
  @ApiProperty({
    type: String,
    nullable: true,
    example: SESSION_RESPONSE_EXAMPLE.userAgent,
  })
  readonly userAgent: string | null;

  /** True for the session whose current refresh token the request named in `X-Refresh-Token`. */
  @ApiProperty({ example: SESSION_RESPONSE_EXAMPLE.current })
  readonly current: boolean;

  static from(session: ListedSession, current: boolean): SessionResponseDto {
    return {
      id: session.id,
      createdAt: session.startedAt.toISOString(),
      lastUsedAt: session.lastUsedAt.toISOString(),
      ip: session.lastIp,
      userAgent: session.lastUserAgent,
      current,
    };
  }
}
