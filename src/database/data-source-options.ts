import type { DataSourceOptions } from 'typeorm';
import { AuditEvent } from '../audit/entities/audit-event.entity.js';
import { AccountToken } from '../auth/entities/account-token.entity.js';
import type { DatabaseConfig } from '../config/app-config.js';
import type { SqliteSynchronous } from '../config/environment-variables.js';
import { RefreshToken } from '../tokens/entities/refresh-token.entity.js';
import { OutboxMail } from '../mail/entities/outbox-mail.entity.js';
import { User } from '../users/entities/user.entity.js';
import { MIGRATIONS } from './migrations/index.js';

const ENTITIES = [User, RefreshToken, AuditEvent, AccountToken, OutboxMail];

const SQLITE_SYNCHRONOUS_PRAGMA: Readonly<Record<SqliteSynchronous, string>> = {
  full: 'FULL',
  normal: 'NORMAL',
};

/**
 * The TypeORM options for a configured database; shared by the application, the CLI and tests.
 * Migrations are not run here: see runMigrations, which makes concurrent start-ups safe.
 */
export function dataSourceOptions(config: DatabaseConfig): DataSourceOptions {
  const common = {
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsRun: false,
    synchronize: false,
    logging: false,
    // A lookup with a null or undefined filter must fail, never match the first row. This is
    // TypeORM 1's default; it is pinned here so an upgrade cannot quietly change it.
    invalidWhereValuesBehavior: { null: 'throw', undefined: 'throw' },
  } as const;
  const { target } = config;
  if (target.type === 'postgres') {
    return {
      ...common,
      type: 'postgres',
      url: target.url,
      poolSize: config.poolSize,
      connectTimeoutMS: config.connectionTimeoutMs,
      extra: {
        max: config.poolSize,
        connectionTimeoutMillis: config.connectionTimeoutMs,
        // The server cancels a statement after this long; the client gives up a little later
        // in case the server itself is unreachable, so no request waits without bound.
        statement_timeout: config.statementTimeoutMs,
        query_timeout: config.statementTimeoutMs + 1_000,
        idle_in_transaction_session_timeout: config.statementTimeoutMs * 2,
        keepAlive: true,
      },
    };
  }
  return {
    ...common,
    type: 'better-sqlite3',
    database: target.path,
    enableWAL: target.path !== ':memory:',
    // better-sqlite3's busy timeout: how long a write waits for another process's lock.
    timeout: config.statementTimeoutMs,
    prepareDatabase: (db: { pragma(source: string): unknown }) => {
      // In WAL mode FULL fsyncs the WAL at every commit, so a commit is acknowledged only once it
      // would survive a power cut; NORMAL fsyncs only at checkpoints and survives a process crash
      // only (https://www.sqlite.org/pragma.html#pragma_synchronous). Decision 0020.
      db.pragma(`synchronous = ${SQLITE_SYNCHRONOUS_PRAGMA[config.sqliteSynchronous]}`);
    },
  };
}
