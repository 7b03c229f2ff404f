import type { DataSourceOptions } from 'typeorm';
import type { DatabaseConfig } from '../config/app-config.js';
import type { SqliteSynchronous } from '../config/environment-variables.js';
import { useBinaryColumnsOf } from './column-types.js';
import { MIGRATIONS, type MigrationClass } from './migrations/index.js';

/** What a data source knows of the schema beyond the connection. */
export interface SchemaOptions {
  /**
   * The entities, for a data source built outside Nest (the TypeORM CLI, tests). The application
   * leaves this out: each module registers its own through `TypeOrmModule.forFeature`.
   */
  readonly entities?: ReadonlyArray<new () => object>;
  /** Migrations run after the core's (see runMigrations): those of the mounted extensions. */
  readonly extensionMigrations?: readonly MigrationClass[];
}

const SQLITE_SYNCHRONOUS_PRAGMA: Readonly<Record<SqliteSynchronous, string>> = {
  full: 'FULL',
  normal: 'NORMAL',
};

/**
 * The TypeORM options for a configured database; shared by the application, the CLI and tests.
 * Migrations are not run here: see runMigrations, which makes concurrent start-ups safe.
 */
export function dataSourceOptions(
  config: DatabaseConfig,
  { entities = [], extensionMigrations = [] }: SchemaOptions = {},
): DataSourceOptions {
  const schema = { entities: [...entities], migrations: [...MIGRATIONS, ...extensionMigrations] };
  const common = {
    ...schema,
    migrationsRun: false,
    synchronize: false,
    logging: false,
    // A lookup with a null or undefined filter must fail, never match the first row. This is
    // TypeORM 1's default; it is pinned here so an upgrade cannot quietly change it.
    invalidWhereValuesBehavior: { null: 'throw', undefined: 'throw' },
  } as const;
  const { target } = config;
  useBinaryColumnsOf(target.type === 'postgres' ? 'postgres' : 'better-sqlite3');
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
      // Negative: a size in KiB rather than a number of pages. The cache is filled as pages
      // are read, so a small database never uses all of it.
      db.pragma(`cache_size = ${-config.sqliteCacheSizeMb * 1024}`);
      // Mapped pages are read without a system call and without a second copy in the page
      // cache; the kernel shares them and may take them back under memory pressure.
      db.pragma(`mmap_size = ${config.sqliteMmapSizeMb * 1024 * 1024}`);
      // In WAL mode FULL fsyncs the WAL at every commit, so a commit is acknowledged only once it
      // would survive a power cut; NORMAL fsyncs only at checkpoints and survives a process crash
      // only (https://www.sqlite.org/pragma.html#pragma_synchronous). Decision 0020.
      db.pragma(`synchronous = ${SQLITE_SYNCHRONOUS_PRAGMA[config.sqliteSynchronous]}`);
    },
  };
}
