import type { Database as SqliteDatabase } from 'better-sqlite3';
import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';

/**
 * The better-sqlite3 connection under a TypeORM data source, for the hot paths that run prepared
 * statements on it. TypeORM keeps it on its SQLite driver as `databaseConnection`, typed `any`
 * and outside its documented API, so this is the one place that reads it, and it checks what it
 * finds: should an upgrade of TypeORM move or wrap the handle, every SQLite hot path fails on
 * its first use with the message below (and driver-handle.spec.ts fails in `npm test`) instead
 * of calling into something else.
 */
export function sqliteConnectionOf(dataSource: DataSource): SqliteDatabase {
  if (dataSource.options.type !== 'better-sqlite3') {
    throw new Error(`A SQLite connection was asked of a ${dataSource.options.type} data source`);
  }
  const handle: unknown = (dataSource.driver as { databaseConnection?: unknown })
    .databaseConnection;
  if (!isSqliteConnection(handle)) {
    throw new Error(
      'TypeORM no longer keeps the better-sqlite3 connection at driver.databaseConnection ' +
        '(see src/database/driver-handle.ts)',
    );
  }
  return handle;
}

/**
 * The connection's busy timeout in milliseconds: how long one of its statements waits, blocking
 * the thread, for a lock another connection holds (better-sqlite3's `timeout`, which the data
 * source sets to `Database__StatementTimeoutMs`).
 */
export function sqliteBusyTimeoutOf(db: SqliteDatabase): number {
  return Number(db.pragma('busy_timeout', { simple: true }));
}

/** True when SQLite refused because another connection holds a lock (SQLITE_BUSY and its kin). */
export function isSqliteBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** What the hot paths use of better-sqlite3's Database, on an open connection. */
function isSqliteConnection(handle: unknown): handle is SqliteDatabase {
  if (typeof handle !== 'object' || handle === null) {
    return false;
  }
  const { prepare, open, inTransaction } = handle as Partial<Record<keyof SqliteDatabase, unknown>>;
  return typeof prepare === 'function' && open === true && typeof inTransaction === 'boolean';
}

/**
 * The `pg` pool under a TypeORM data source on PostgreSQL, for the named statements of the hot
 * paths, so they share TypeORM's pool size and timeouts. TypeORM keeps it as the driver's
 * `master`, public but untyped; like the SQLite handle it is read here only and checked, so an
 * upgrade that moves it fails every PostgreSQL hot path (and the PostgreSQL suites) loudly.
 */
export function postgresPoolOf(dataSource: DataSource): Pool {
  if (dataSource.options.type !== 'postgres') {
    throw new Error(`A PostgreSQL pool was asked of a ${dataSource.options.type} data source`);
  }
  const handle: unknown = (dataSource.driver as { master?: unknown }).master;
  if (!isPostgresPool(handle)) {
    throw new Error(
      'TypeORM no longer keeps the pg pool at driver.master (see src/database/driver-handle.ts)',
    );
  }
  return handle;
}

/** What the hot paths use of pg's Pool. */
function isPostgresPool(handle: unknown): handle is Pool {
  if (typeof handle !== 'object' || handle === null) {
    return false;
  }
  const { connect, query } = handle as Partial<Record<keyof Pool, unknown>>;
  return typeof connect === 'function' && typeof query === 'function';
}
