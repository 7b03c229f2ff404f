import { ApiProperty } from '@nestjs/swagger';
import type { User } from '../entities/user.entity.js';

/** The user the documentation's examples show. */
export const USER_RESPONSE_EXAMPLE = {
  id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
  username: 'alice',
  email: 'alice@example.com',
  createdAt: '2026-01-01T09:00:00.000Z',
} as const satisfies UserResponseDto;

/** Spec §2.1: the public user representation. */
export class UserResponseDto {
  @ApiProperty({ format: 'uuid', example: USER_RESPONSE_EXAMPLE.id })
  readonly id: string;

  @ApiProperty({ example: USER_RESPONSE_EXAMPLE.username })
  readonly username: string;

  @ApiProperty({ format: 'email', example: USER_RESPONSE_EXAMPLE.email })
  readonly email: string;

  /** When the account was created, ISO 8601 UTC. */
  @ApiProperty({ format: 'date-time', example: USER_RESPONSE_EXAMPLE.createdAt })
  readonly createdAt: string;

  static from(user: Pick<User, 'id' | 'username' | 'email' | 'createdAt'>): UserResponseDto {
    return {
      id: user.id,
      username: user.username,
      email: user.email,
      createdAt: user.createdAt.toISOString(),
    };
  }
}
