import { Injectable } from '@nestjs/common';
import type { Database, Statement } from 'better-sqlite3';
import { DataSource, In, IsNull, type EntityManager } from 'typeorm';
import { ConflictError } from '../common/errors/domain-errors.js';
import { EntityRows, type RawRow } from '../database/entity-rows.js';
import type { GuardedWrite } from '../database/guarded-write.js';
import { NamedStatement } from '../database/postgres-statements.js';
import { typedParameters } from '../database/postgres-types.js';
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

/** A successful login's bookkeeping: every column of it, so its statement's text is fixed. */
export type SuccessfulLoginState = LockoutState & Pick<User, 'lastLoginAt' | 'passwordHash'>;

/** The columns a successful login writes, in the order of loginStateWrite's parameters. */
const LOGIN_COLUMNS = ['failedLoginAttempts', 'lockoutEnd', 'lastLoginAt', 'passwordHash'] as const;

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

  /**
   * At most `limit` accounts in a stable order, after `after` (the order column's value of the
   * last account of the previous page; '' for the first): by id, or by e-mail when `emailPrefix`
   * is given (a range of UQ_users_email, exact on both engines because the prefix is checked
   * again). `filter` narrows them; every read is a range of a unique index, never a whole table.
   */
  listPage(query: AccountPageQuery): Promise<User[]> {
    return this.unitOfWork.run((m) => {
      const byEmail = query.emailPrefix !== null;
      const order = byEmail ? 'email' : 'id';
      const builder = m.createQueryBuilder(User, 'u').where(`u.${order} > :after`, {
        after: query.after,
      });
      if (query.emailPrefix !== null) {
        builder
          .andWhere('u.email >= :prefix AND u.email < :upper', {
            prefix: query.emailPrefix,
            upper: prefixUpperBound(query.emailPrefix),
          })
          .andWhere('SUBSTR(u.email, 1, :length) = :prefix', {
            length: query.emailPrefix.length,
          });
      }
      switch (query.filter) {
        case null:
          break;
        case 'active':
          builder.andWhere('u.isActive = :isActive', { isActive: true });
          break;
        case 'deactivated':
          builder.andWhere('u.isActive = :isActive', { isActive: false });
          break;
        case 'locked':
          builder.andWhere('u.lockoutEnd > :now', { now: query.now });
          break;
        case 'unverified':
          builder.andWhere('u.emailVerifiedAt IS NULL');
          break;
      }
      return builder.orderBy(`u.${order}`, 'ASC').limit(query.limit).getMany();
    });
  }

  /** The accounts among `ids` (primary-key reads), by id. */
  findByIds(ids: readonly string[]): Promise<User[]> {
    if (ids.length === 0) {
      return Promise.resolve([]);
    }
    return this.unitOfWork.run((m) =>
      m.find(User, { where: { id: In([...ids]) }, order: { id: 'ASC' } }),
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
   * The new account's insert, as a write another repository's statement is conditional on
   * (registration's one statement, decision 0034): a taken e-mail, even one taken a moment ago,
   * is a ConflictError, on either path.
   */
  insertWrite(user: User): GuardedWrite {
    return {
      kind: 'registration',
      sql: (first, when) =>
        `INSERT INTO "${this.rows.table}" (${this.rows.names()}) SELECT ` +
        typedParameters(this.dataSource, this.rows.columns, first).join(', ') +
        ` WHERE ${when} RETURNING "id"`,
      values: this.rows.values(user),
      within: async (manager) => {
        await this.insert(user, manager);
        return true;
      },
      translate: (error) => (this.isEmailTaken(error) ? emailTaken() : error),
    };
  }

  /**
   * A successful login's bookkeeping, `next`, written only if the account's lockout state is still
   * `seen` (replaceLoginState), as a write another repository's statement is conditional on (the
   * login's one statement, decision 0034). On PostgreSQL it also requires that the row did not
   * change since the statement's snapshot was taken (its `xmin`): an update that waited for a
   * concurrent login, or any other change of the row, to commit re-checks that on the committed
   * row and does not match, so the caller reads again and retries with a new snapshot. So the
   * session starts of one account take turns on its row across instances, and each one's
   * snapshot holds every session the others committed (the sessions limit counts them).
   */
  loginStateWrite(id: string, seen: LockoutState, next: SuccessfulLoginState): GuardedWrite {
    return {
      kind: 'login',
      sql: (first, when) => {
        const set = LOGIN_COLUMNS.map(
          (property, i) => `"${this.rows.column(property).databaseName}" = $${first + 1 + i}`,
        );
        const [attempts, lockoutEnd] = [first + 5, first + 6];
        const table = `"${this.rows.table}"`;
        return (
          `UPDATE ${table} SET ${set.join(', ')} WHERE "id" = $${first} ` +
          // Both parameters take their column's type: no cast.
          `AND "failedLoginAttempts" = $${attempts} ` +
          `AND "lockoutEnd" IS NOT DISTINCT FROM $${lockoutEnd} ` +
          // The login decided on an active account it read before this statement's snapshot: a
          // deactivation committed in between (its sessions already ended) must not let it in.
          `AND "${this.rows.column('isActive').databaseName}" = TRUE ` +
          `AND xmin = (SELECT xmin FROM ${table} WHERE "id" = $${first}) AND ${when} ` +
          'RETURNING "id"'
        );
      },
      values: [
        id,
        ...LOGIN_COLUMNS.map((property) => next[property]),
        seen.failedLoginAttempts,
        seen.lockoutEnd,
      ],
      within: (manager) => this.replaceLoginState(id, seen, next, manager, { requireActive: true }),
      translate: (error) => error,
    };
  }

  /**
   * A unique violation on this table, raised through TypeORM or by a `pg` statement of this
   * repository's (not a QueryFailedError): the e-mail's unique index, the only one a new account
   * can meet (its id is a new UUID).
   */
  private isEmailTaken(error: unknown): boolean {
    return (
      isUniqueViolation(error) ||
      (typeof error === 'object' &&
        error !== null &&
        'code' in error &&
        error.code === '23505' &&
        'table' in error &&
        error.table === this.rows.table)
    );
  }

  /**
   * Writes `next` only if the account's lockout state is still `seen` (and, with
   * `requireActive`, the account still active); says whether it did.
   */
  async replaceLoginState(
    id: string,
    seen: LockoutState,
    next: LoginState,
    manager?: EntityManager,
    options: { readonly requireActive?: boolean } = {},
  ): Promise<boolean> {
    const result = await this.within(manager, (m) =>
      m.update(
        User,
        {
          id,
          failedLoginAttempts: seen.failedLoginAttempts,
          lockoutEnd: seen.lockoutEnd === null ? IsNull() : seen.lockoutEnd,
          ...(options.requireActive === true ? { isActive: true } : {}),
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

/** What listPage reads: see there. */
export interface AccountPageQuery {
  readonly emailPrefix: string | null;
  readonly filter: 'active' | 'deactivated' | 'locked' | 'unverified' | null;
  readonly after: string;
  readonly limit: number;
  /** What "locked" is measured against. */
  readonly now: Date;
}

/**
 * The smallest string greater than every string starting with `prefix`: its last character
 * moved one code unit up. E-mails are stored in lower case, so the last character is never the
 * largest code unit.
 */
function prefixUpperBound(prefix: string): string {
  const last = prefix.charCodeAt(prefix.length - 1);
  return prefix.slice(0, -1) + String.fromCharCode(last + 1);
}

function emailTaken(): ConflictError {
  return new ConflictError(UsersMessages.emailTaken);
}

/** Like TypeORM's own where-value check: a lookup by a missing id must fail, not match. */
function requireId(id: string): string {
  if (typeof id !== 'string') {
    throw new TypeError('A user lookup needs an id');
  }
  return id;
}
