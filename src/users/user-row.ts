import { fromSqliteDatetime } from '../database/sqlite-datetime.js';
import type { User } from './entities/user.entity.js';

/** A `users` row as better-sqlite3 returns it: TypeORM's UTC datetime text and 0/1 booleans. */
export interface SqliteUserRow {
  readonly id: string;
  readonly username: string;
  readonly email: string;
  readonly passwordHash: string;
  readonly failedLoginAttempts: number;
  readonly lockoutEnd: string | null;
  readonly isActive: number;
  readonly createdAt: string;
  readonly lastLoginAt: string | null;
  readonly emailVerifiedAt: string | null;
}

export const SELECT_USER_BY_ID_SQLITE =
  'SELECT "id", "username", "email", "passwordHash", "failedLoginAttempts", "lockoutEnd", ' +
  '"isActive", "createdAt", "lastLoginAt", "emailVerifiedAt" FROM "users" WHERE "id" = ?';

/** The entity TypeORM would hydrate from the same row (see user-row.spec.ts). */
export function userFromSqliteRow(row: SqliteUserRow): User {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    passwordHash: row.passwordHash,
    failedLoginAttempts: row.failedLoginAttempts,
    lockoutEnd: fromSqliteDatetime(row.lockoutEnd),
    isActive: row.isActive === 1,
    createdAt: fromSqliteDatetime(row.createdAt),
    lastLoginAt: fromSqliteDatetime(row.lastLoginAt),
    emailVerifiedAt: fromSqliteDatetime(row.emailVerifiedAt),
  };
}
