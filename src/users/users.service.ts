import { Injectable, Optional } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { NotFoundError, UnauthorizedError } from '../common/errors/domain-errors.js';
import { AccountStateCache } from './account-cache/account-state-cache.js';
import { UserResponseDto } from './dto/user-response.dto.js';
import type { User } from './entities/user.entity.js';
import type { GuardedWrite } from '../database/guarded-write.js';
import {
  UserRepository,
  type AccountPageQuery,
  type AccountState,
  type AccountSummary,
  type LockoutState,
  type LoginState,
  type SuccessfulLoginState,
} from './user.repository.js';
import { UsersMessages } from './users.messages.js';

export type {
  AccountPageQuery,
  AccountState,
  AccountSummary,
  LockoutState,
  LoginState,
} from './user.repository.js';

/** Users: the account rules. Returns entities to other services, DTOs to its controller. */
@Injectable()
export class UsersService {
  constructor(
    private readonly users: UserRepository,
    // Optional so that a unit test of another service can build UsersService with its repository
    // alone; the module always provides it, and without it every read is strict.
    @Optional() private readonly accountStates?: AccountStateCache,
  ) {}

  findById(id: string, manager?: EntityManager): Promise<User | null> {
    return this.users.findById(id, manager);
  }

  /** `email` must already be normalised (see normalizeEmail). */
  findByEmail(email: string, manager?: EntityManager): Promise<User | null> {
    return this.users.findByEmail(email, manager);
  }

  /**
   * Every account, by id: only columns the first migration made, so it also works on a database
   * whose later migrations are pending. For the admin CLI, not a request path.
   */
  listAccounts(): Promise<AccountSummary[]> {
    return this.users.listAccounts();
  }

  /** A page of accounts in a stable order (the admin API's listing); see UserRepository. */
  listPage(query: AccountPageQuery): Promise<User[]> {
    return this.users.listPage(query);
  }

  /** The accounts among `ids`, by id. */
  findByIds(ids: readonly string[]): Promise<User[]> {
    return this.users.findByIds(ids);
  }

  /** Inserts a new user; a taken e-mail, even one taken a moment ago, is a ConflictError. */
  insert(user: User, manager: EntityManager): Promise<void> {
    return this.users.insert(user, manager);
  }

  /**
   * The new account's insert, for a statement that writes more with it (registration's session):
   * a taken e-mail is a ConflictError.
   */
  insertWrite(user: User): GuardedWrite {
    return this.users.insertWrite(user);
  }

  /**
   * A successful login's bookkeeping, written only if the account's lockout state is still `seen`
   * (and, on PostgreSQL, the account unchanged since the statement began), for the statement that
   * starts its session: as replaceLoginState, a write that did not match makes the caller retry.
   */
  loginStateWrite(id: string, seen: LockoutState, next: SuccessfulLoginState): GuardedWrite {
    return this.users.loginStateWrite(id, seen, next);
  }

  /**
   * Writes `next` only if the account's lockout state is still `seen`, and says whether it did.
   * Another instance may have counted a failure meanwhile; the caller then re-reads and decides
   * again, so every outcome is one that some one-at-a-time order would give.
   */
  replaceLoginState(
    id: string,
    seen: LockoutState,
    next: LoginState,
    manager?: EntityManager,
  ): Promise<boolean> {
    return this.users.replaceLoginState(id, seen, next, manager);
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
  setPasswordHash(
    id: string,
    passwordHash: string,
    manager: EntityManager,
    ifStill?: string,
  ): Promise<boolean> {
    return this.users.setPasswordHash(id, passwordHash, manager, ifStill);
  }

  /** Marks `email` proven, if it is still the account's address; false otherwise. */
  markEmailVerified(id: string, email: string, at: Date, manager: EntityManager): Promise<boolean> {
    return this.users.markEmailVerified(id, email, at, manager);
  }

  /**
   * Replaces the address `from` with `to`, proven at `at`; false when the account's address is no
   * longer `from`. A taken address, even one taken a moment ago, is a ConflictError.
   */
  replaceEmail(
    id: string,
    change: { readonly from: string; readonly to: string; readonly at: Date },
    manager: EntityManager,
  ): Promise<boolean> {
    return this.users.replaceEmail(id, change, manager);
  }

  /**
   * Deletes an account; its refresh tokens, mailed-link tokens and mails go with it (foreign keys
   * with ON DELETE CASCADE). False when it did not exist.
   */
  delete(id: string, manager?: EntityManager): Promise<boolean> {
    return this.users.delete(id, manager);
  }

  /** Activates or deactivates an account; false when it already was in that state. */
  setActive(id: string, isActive: boolean, manager?: EntityManager): Promise<boolean> {
    return this.users.setActive(id, isActive, manager);
  }

  /**
   * The account a verified access token names, if it may still act: SPEC §4.2 `me`'s answers,
   * which the global guard gives on every protected route. A deleted account is NotFoundError
   * (`Usuario no encontrado.`), a deactivated one UnauthorizedError (`Cuenta desactivada.`).
   * With Database__AccountCache=on (PostgreSQL) the state may come from AccountStateCache, only
   * while it is provably within its staleness bound; otherwise, and by default, it is read.
   */
  async requireActiveAccount(id: string): Promise<AccountState> {
    const read = () => this.users.findAccountState(id);
    const user = await (this.accountStates?.read(id, read) ?? read());
    if (user === null) {
      throw new NotFoundError(UsersMessages.notFound);
    }
    if (!user.isActive) {
      throw new UnauthorizedError(UsersMessages.deactivated);
    }
    return user;
  }

  /** Spec §4.2 `me`: the public profile of the account the guard let through. */
  profileOf(account: AccountState): UserResponseDto {
    return UserResponseDto.from(account);
  }
}
