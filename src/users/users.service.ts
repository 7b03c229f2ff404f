import { Injectable } from '@nestjs/common';
import type { Statement } from 'better-sqlite3';
import { IsNull, type EntityManager } from 'typeorm';
import { ConflictError, NotFoundError, UnauthorizedError } from '../common/errors/domain-errors.js';
import { isUniqueViolation } from '../database/unique-violation.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { UserResponseDto } from './dto/user-response.dto.js';
import { User } from './entities/user.entity.js';
import { SELECT_USER_BY_ID_SQLITE, userFromSqliteRow, type SqliteUserRow } from './user-row.js';
import { UsersMessages } from './users.messages.js';

/** The lockout columns: what a login reads before it decides, and expects unchanged when it writes. */
export type LockoutState = Pick<User, 'failedLoginAttempts' | 'lockoutEnd'>;

/** What the admin CLI shows of an account next to its address. */
export type AccountSummary = Pick<User, 'id' | 'email' | 'createdAt' | 'lastLoginAt'>;

/** The login bookkeeping columns, written together. */
export type LoginState = LockoutState & Partial<Pick<User, 'lastLoginAt' | 'passwordHash'>>;

/** Data access for users. Returns entities to other services, DTOs to its controller. */
@Injectable()
export class UsersService {
  private selectById: Statement<[string], SqliteUserRow> | undefined;

  constructor(private readonly unitOfWork: UnitOfWork) {}

  findById(id: string, manager?: EntityManager): Promise<User | null> {
    if (manager === undefined && this.unitOfWork.isSerialized) {
      // The `me` hot path: a prepared statement costs a fifth of TypeORM's findOneBy.
      return this.unitOfWork.runOnSqlite((db) => {
        this.selectById ??= db.prepare<[string], SqliteUserRow>(SELECT_USER_BY_ID_SQLITE);
        const row = this.selectById.get(requireId(id));
        return row === undefined ? null : userFromSqliteRow(row);
      });
    }
    return this.within(manager, (m) => m.findOneBy(User, { id }));
  }

  /** `email` must already be normalised (see normalizeEmail). */
  findByEmail(email: string, manager?: EntityManager): Promise<User | null> {
    return this.within(manager, (m) => m.findOneBy(User, { email }));
  }

  /**
   * Every account, by id: only columns the first migration made, so it also works on a database
   * whose later migrations are pending. For the admin CLI, not a request path.
   */
  listAccounts(): Promise<AccountSummary[]> {
    return this.unitOfWork.run((m) =>
      m.find(User, {
        select: { id: true, email: true, createdAt: true, lastLoginAt: true },
        order: { id: 'ASC' },
      }),
    );
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

  /**
   * Writes `next` only if the account's lockout state is still `seen`, and says whether it did.
   * Another instance may have counted a failure meanwhile; the caller then re-reads and decides
   * again, so every outcome is one that some one-at-a-time order would give.
   */
  async replaceLoginState(
    id: string,
    seen: LockoutState,
    next: LoginState,
    manager?: EntityManager,
  ): Promise<boolean> {
    const result = await this.within(manager, (m) =>
      m.update(
        User,
        {
          id,
          failedLoginAttempts: seen.failedLoginAttempts,
          lockoutEnd: seen.lockoutEnd === null ? IsNull() : seen.lockoutEnd,
        },
        next,
      ),
    );
    return result.affected === 1;
  }

  /**
   * The loop around replaceLoginState: `attempt` decides on the account as read and writes only
   * if its lockout state is still the one read, answering null when another writer got there
   * first. The account is then read again, shown to `onReread` (which may refuse it by
   * throwing), and `attempt` decides anew. A deleted account ends the loop with `whenGone`,
   * shown the account as last read. Login and the admin unlock both go through it.
   */
  async retryOnLoginStateChange<T>(
    user: User,
    attempt: (current: User) => Promise<T | null>,
    handlers: {
      readonly whenGone: (last: User) => Error;
      readonly onReread?: (current: User) => void;
    },
  ): Promise<T> {
    let current = user;
    for (;;) {
      const result = await attempt(current);
      if (result !== null) {
        return result;
      }
      const again = await this.findById(current.id);
      if (again === null) {
        throw handlers.whenGone(current);
      }
      handlers.onReread?.(again);
      current = again;
    }
  }

  /**
   * Sets a new password hash; with `ifStill`, only if the stored one is still that (false when it
   * changed meanwhile).
   */
  async setPasswordHash(
    id: string,
    passwordHash: string,
    manager: EntityManager,
    ifStill?: string,
  ): Promise<boolean> {
    const where = ifStill === undefined ? { id } : { id, passwordHash: ifStill };
    const result = await manager.update(User, where, { passwordHash });
    return result.affected === 1;
  }

  /** Marks `email` proven, if it is still the account's address; false otherwise. */
  async markEmailVerified(
    id: string,
    email: string,
    at: Date,
    manager: EntityManager,
  ): Promise<boolean> {
    const result = await manager.update(User, { id, email }, { emailVerifiedAt: at });
    return result.affected === 1;
  }

  /**
   * Replaces the address `from` with `to`, proven at `at`; false when the account's address is no
   * longer `from`. A taken address, even one taken a moment ago, is a ConflictError.
   */
  async replaceEmail(
    id: string,
    change: { readonly from: string; readonly to: string; readonly at: Date },
    manager: EntityManager,
  ): Promise<boolean> {
    try {
      const result = await manager.update(
        User,
        { id, email: change.from },
        { email: change.to, emailVerifiedAt: change.at },
      );
      return result.affected === 1;
    } catch (error: unknown) {
      if (isUniqueViolation(error)) {
        throw new ConflictError(UsersMessages.emailTaken);
      }
      throw error;
    }
  }

  /**
   * Deletes an account; its refresh tokens, mailed-link tokens and mails go with it (foreign keys
   * with ON DELETE CASCADE). False when it did not exist.
   */
  async delete(id: string): Promise<boolean> {
    const result = await this.unitOfWork.run((m) => m.delete(User, { id }));
    return result.affected === 1;
  }

  /** Activates or deactivates an account; false when it already was in that state. */
  async setActive(id: string, isActive: boolean): Promise<boolean> {
    const result = await this.unitOfWork.run((m) =>
      m.update(User, { id, isActive: !isActive }, { isActive }),
    );
    return result.affected === 1;
  }

  /**
   * The account a verified access token names, if it may still act: SPEC §4.2 `me`'s answers,
   * which the global guard gives on every protected route. A deleted account is NotFoundError
   * (`Usuario no encontrado.`), a deactivated one UnauthorizedError (`Cuenta desactivada.`).
   */
  async requireActiveAccount(id: string): Promise<User> {
    const user = await this.findById(id);
    if (user === null) {
      throw new NotFoundError(UsersMessages.notFound);
    }
    if (!user.isActive) {
      throw new UnauthorizedError(UsersMessages.deactivated);
    }
    return user;
  }

  /** Spec §4.2 `me`: the public profile of the account the guard let through. */
  profileOf(account: User): UserResponseDto {
    return UserResponseDto.from(account);
  }

  private within<T>(
    manager: EntityManager | undefined,
    work: (manager: EntityManager) => Promise<T>,
  ): Promise<T> {
    return manager === undefined ? this.unitOfWork.run(work) : work(manager);
  }
}

/** Like TypeORM's own where-value check: a lookup by a missing id must fail, not match. */
function requireId(id: string): string {
  if (typeof id !== 'string') {
    throw new TypeError('A user lookup needs an id');
  }
  return id;
}
