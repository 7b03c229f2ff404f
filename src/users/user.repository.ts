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

/**
 * What a protected request needs of its bearer's account: whether it may act (SPEC §4.2) and the
 * profile `GET /me` answers with. Nothing secret (no password hash) rides along on the request.
 */
export type AccountState = Pick<User, (typeof ACCOUNT_STATE_COLUMNS)[number]>;

/** AccountState's columns; the read's column list comes from the entity's metadata for these. */
export const ACCOUNT_STATE_COLUMNS = [
  'id',
  'username',
  'email',
  'isActive',
  'createdAt',
] as const satisfies readonly (keyof User)[];

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
  private readonly stateRows: EntityRows<User>;
  private readonly stateByIdSql: string;
  private sqliteStateById: Statement<[string], RawRow> | undefined;
  private postgresStateById: NamedStatement | undefined;

  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly dataSource: DataSource,
  ) {
    this.rows = new EntityRows(dataSource, User);
    this.byIdSql = `SELECT ${this.rows.names()} FROM "${this.rows.table}" WHERE "id" = `;
    this.stateRows = new EntityRows(dataSource, User, ACCOUNT_STATE_COLUMNS);
    this.stateByIdSql = `SELECT ${this.stateRows.names()} FROM "${this.stateRows.table}" WHERE "id" = `;
  }

  /**
   * The account check of every protected request: one primary-key read of AccountState's columns
   * only, half of the row's, with none of the login bookkeeping to convert (on SQLite a prepared
   * statement, on PostgreSQL a named one). Null when the account does not exist.
   */
  async findAccountState(id: string): Promise<AccountState | null> {
    requireId(id);
    let row: RawRow | undefined;
    if (this.unitOfWork.isSerialized) {
      row = await this.unitOfWork.runOnSqlite((db) => {
        this.sqliteStateById ??= db.prepare<[string], RawRow>(`${this.stateByIdSql}?`);
        return this.sqliteStateById.get(id);
      });
    } else {
      this.postgresStateById ??= new NamedStatement(
        this.dataSource,
        'users_account_state_by_id',
        `${this.stateByIdSql}$1`,
      );
      row = await this.postgresStateById.first([id]);
    }
    if (row === undefined) {
      return null;
    }
    // A plain object of these columns only: an entity instance would carry every other column's
    // property too, undefined.
    const { id: accountId, username, email, isActive, createdAt } = this.stateRows.hydrate(row);
    return { id: accountId, username, email, isActive, createdAt };
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
