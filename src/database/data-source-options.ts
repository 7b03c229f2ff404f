import type { DataSourceOptions } from 'typeorm';
import type { DatabaseTarget } from '../config/connection-string.js';
import { RefreshToken } from '../tokens/entities/refresh-token.entity.js';
import { User } from '../users/entities/user.entity.js';
import { MIGRATIONS } from './migrations/index.js';

/** How long a write waits for a lock held by another connection before it fails. */
export const SQLITE_BUSY_TIMEOUT_MS = 5_000;

/** The TypeORM options for a target; shared by the application and the TypeORM CLI. */
export function dataSourceOptions(target: DatabaseTarget): DataSourceOptions {
  if (target.type === 'postgres') {
    throw new Error('PostgreSQL is not supported yet');
  }
  return {
    type: 'better-sqlite3',
    database: target.path,
    enableWAL: target.path !== ':memory:',
    timeout: SQLITE_BUSY_TIMEOUT_MS,
    entities: [User, RefreshToken],
    migrations: MIGRATIONS,
    migrationsRun: true,
    synchronize: false,
    logging: false,
    // A lookup with a null or undefined filter must fail, never match the first row. This is
    // TypeORM 1's default; it is pinned here so an upgrade cannot quietly change it.
    invalidWhereValuesBehavior: { null: 'throw', undefined: 'throw' },
    prepareDatabase: (db: { pragma(source: string): unknown }) => {
      // WAL with NORMAL sync is durable against process crashes; only power loss can lose the
      // last commits.
      db.pragma('synchronous = NORMAL');
    },
  };
}
