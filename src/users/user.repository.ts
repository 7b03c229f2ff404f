import { Injectable } from '@nestjs/common';
import type { Database, Statement } from 'better-sqlite3';
import { DataSource, IsNull, type EntityManager } from 'typeorm';
import { ConflictError } from '../common/errors/domain-errors.js';
import { EntityRows, type RawRow } from '../database/entity-rows.js';
import { NamedStatement } from '../database/postgres-statements.js';
import { isUniqueViolation } from '../database/unique-violation.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { User } from './entities/user.entity.js';
import { UsersMessages } from './users.messages.js';

/** The lockout columns: what a login reads before it decides, and expects unchanged when it writes. */
export type LockoutState = Pick<User, 'failedLoginAttempts' | 'lockoutEnd'>;

/** What the admin CLI shows of an account next to its address. */
export type AccountSummary = Pick<User, 'id' | 'email' | 'createdAt' | 'lastLoginAt'>;

/** The login bookkeeping columns, written together. */
export type LoginState = LockoutState & Partial<Pick<User, 'lastLoginAt' | 'passwordHash'>>;

/**
 * The queries on `users`, on both engines; the only code that names the table. Used by the users
 * module's services (and, for the owner read inside a rotation, by the token repository).
 */
@Injectable()
export class UserRepository {
  private readonly rows: EntityRows<User>;
  private readonly byIdSql: string;
  private sqliteById: Statement<[string], RawRow> | undefined;
  private postgresById: NamedStatement | undefined;

  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly dataSource: DataSource,
  ) {
    this.rows = new EntityRows(dataSource, User);
    this.byIdSql = `SELECT ${this.rows.names()} FROM "${this.rows.table}" WHERE "id" = `;
  }

  /**
   * One primary-key read. Every protected request makes it (the guard's account check), so it is
   * a prepared statement on SQLite and a named statement on PostgreSQL; inside a caller's
   * transaction, TypeORM on that transaction.
   */
  async findById(id: string, manager?: EntityManager): Promise<User | null> {
    requireId(id);
    if (manager !== undefined) {
      return manager.findOneBy(User, { id });
    }
    if (this.unitOfWork.isSerialized) {
      return this.unitOfWork.runOnSqlite((db) => this.findByIdOnSqlite(db, id));
    }
    this.postgresById ??= new NamedStatement(this.dataSource, 'users_by_id', `${this.byIdSql}$1`);
    const row = await this.postgresById.first([id]);
    return row === undefined ? null : this.rows.hydrate(row);
  }

  /** SQLite only, inside a unit already running on `db` (the token repository's rotation). */
  findByIdOnSqlite(db: Database, id: string): User | null {
    this.sqliteById ??= db.prepare<[string], RawRow>(`${this.byIdSql}?`);
    const row = this.sqliteById.get(requireId(id));
    return row === undefined ? null : this.rows.hydrate(row);
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

  /** Writes `next` only if the account's lockout state is still `seen`; says whether it did. */
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

  /** Sets a new password hash; with `ifStill`, only if the stored one is still that. */
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

  /** Replaces the address `from` with `to`, proven at `at`; false when it is no longer `from`. */
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

  /** Deletes an account (its tokens and mails go with it, by foreign key); false if absent. */
  async delete(id: string, manager?: EntityManager): Promise<boolean> {
    const result = await this.within(manager, (m) => m.delete(User, { id }));
    return result.affected === 1;
  }

  /** Activates or deactivates an account; false when it already was in that state. */
  async setActive(id: string, isActive: boolean, manager?: EntityManager): Promise<boolean> {
    const result = await this.within(manager, (m) =>
      m.update(User, { id, isActive: !isActive }, { isActive }),
    );
    return result.affected === 1;
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
