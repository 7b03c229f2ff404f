import { ApiProperty } from '@nestjs/swagger';
import type { ListedSession } from '../../../tokens/entities/session.entity.js';

/** One active session of an account. */
export class AdminSessionResponseDto {
  @ApiProperty({ format: 'uuid' })
  readonly id: string;

  @ApiProperty({ format: 'date-time' })
  readonly createdAt: string;

  @ApiProperty({ format: 'date-time' })
  readonly lastUsedAt: string;

  readonly ip: string;

  @ApiProperty({ type: String, nullable: true })
  readonly userAgent: string | null;

  static from(session: ListedSession): AdminSessionResponseDto {
    return {
      id: session.id,
      createdAt: session.startedAt.toISOString(),
      lastUsedAt: session.lastUsedAt.toISOString(),
      ip: session.lastIp,
      userAgent: session.lastUserAgent,
    };
  }
}

/** An account's active sessions, most recently used first. */
export class AdminSessionListResponseDto {
  @ApiProperty({ format: 'uuid' })
  readonly userId: string;

  @ApiProperty({ type: [AdminSessionResponseDto] })
  readonly sessions: AdminSessionResponseDto[];
}
