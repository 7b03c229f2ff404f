import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ConflictError, NotFoundError, UnauthorizedError } from '../common/errors/domain-errors.js';
import { isUniqueViolation } from '../database/unique-violation.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { UserResponseDto } from './dto/user-response.dto.js';
import { User } from './entities/user.entity.js';
import { UsersMessages } from './users.messages.js';

/** The login bookkeeping columns, written together. */
export type LoginState = Pick<User, 'failedLoginAttempts' | 'lockoutEnd'> &
  Partial<Pick<User, 'lastLoginAt' | 'passwordHash'>>;

/** Data access for users. Returns entities to other services, DTOs to its controller. */
@Injectable()
export class UsersService {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  findById(id: string, manager?: EntityManager): Promise<User | null> {
    return this.within(manager, (m) => m.findOneBy(User, { id }));
  }

  /** `email` must already be normalised (see normalizeEmail). */
  findByEmail(email: string): Promise<User | null> {
    return this.unitOfWork.run((m) => m.findOneBy(User, { email }));
  }

  /** Inserts a new user; a taken e-mail, even one taken a moment ago, is a ConflictError. */
  async insert(user: User, manager: EntityManager): Promise<void> {
    try {
      await manager.insert(User, user);
    } catch (error: unknown) {
      if (isUniqueViolation(error)) {
        throw new ConflictError(UsersMessages.emailTaken);
      }
      throw error;
    }
  }

  async updateLoginState(id: string, state: LoginState, manager?: EntityManager): Promise<void> {
    const result = await this.within(manager, (m) => m.update(User, { id }, state));
    if (result.affected !== 1) {
      throw new Error(`User ${id} vanished while its login state was being written`);
    }
  }

  /** Spec §4.2 `me`: the public profile of an existing, active user. */
  async getProfile(id: string): Promise<UserResponseDto> {
    const user = await this.findById(id);
    if (user === null) {
      throw new NotFoundError(UsersMessages.notFound);
    }
    if (!user.isActive) {
      throw new UnauthorizedError(UsersMessages.deactivated);
    }
    return UserResponseDto.from(user);
  }

  private within<T>(
    manager: EntityManager | undefined,
    work: (manager: EntityManager) => Promise<T>,
  ): Promise<T> {
    return manager === undefined ? this.unitOfWork.run(work) : work(manager);
  }
}
