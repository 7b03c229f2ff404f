import { DataSource, MigrationExecutor } from 'typeorm';

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
  // A connection of its own, without the pool's request-sized timeouts: they must not cut short
  // the wait for another instance's migrations, nor a long migration statement.
  const options = dataSource.options;
  const migrator = new DataSource({
    ...options,
    poolSize: 1,
    extra: { ...(options.extra as object), max: 1, statement_timeout: 0, query_timeout: undefined },
  });
  await migrator.initialize();
  const runner = migrator.createQueryRunner();
  try {
    await runner.connect();
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      const executor = new MigrationExecutor(migrator, runner);
      executor.transaction = 'all';
      await executor.executePendingMigrations();
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await runner.release();
    await migrator.destroy();
  }
}
