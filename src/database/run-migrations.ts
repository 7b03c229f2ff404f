import type { DataSource } from 'typeorm';

/** Any fixed 64-bit number, shared by every instance: the advisory lock around migrations. */
const MIGRATION_LOCK_KEY = '7394027311001';

/**
 * Runs pending migrations in one transaction. On PostgreSQL an advisory lock makes instances that
 * start together against an empty database take turns: the first migrates, the others then find
 * nothing pending. SQLite serialises writers by itself.
 */
export async function runMigrations(dataSource: DataSource): Promise<void> {
  if (dataSource.options.type !== 'postgres') {
    await dataSource.runMigrations({ transaction: 'all' });
    return;
  }
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await dataSource.runMigrations({ transaction: 'all' });
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await runner.release();
  }
}
