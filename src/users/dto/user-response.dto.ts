import type { User } from '../entities/user.entity.js';

/** Spec §2.1: the public user representation. */
export class UserResponseDto {
  /** @example "3f2504e0-4f89-41d3-9a0c-0305e82c3301" */
  readonly id: string;

  /** @example "alice" */
  readonly username: string;

  /** @example "alice@example.com" */
  readonly email: string;

  /** ISO 8601 UTC. */
  readonly createdAt: string;

  static from(user: User): UserResponseDto {
    return {
      id: user.id,
      username: user.username,
      email: user.email,
      createdAt: user.createdAt.toISOString(),
    };
  }
}
