import { DataSource, MigrationExecutor, type Migration, type QueryRunner } from 'typeorm';
import { MIGRATIONS } from './migrations/index.js';

/** Any fixed 64-bit number, shared by every instance: the advisory lock around migrations. */
const MIGRATION_LOCK_KEY = '7394027311001';

/**
 * Runs pending migrations in one transaction: the core's first, then the extensions', each group
 * in timestamp order. On PostgreSQL an advisory lock makes instances that start together against
 * an empty database take turns: the first migrates, the others then find nothing pending. SQLite
 * serialises writers by itself.
 */
export async function runMigrations(dataSource: DataSource): Promise<void> {
  if (dataSource.options.type !== 'postgres') {
    await coreFirst(dataSource).executePendingMigrations();
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
      await coreFirst(migrator, runner).executePendingMigrations();
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await runner.release();
    await migrator.destroy();
  }
}

const CORE: ReadonlySet<unknown> = new Set(MIGRATIONS);

function isCore(migration: Migration): boolean {
  return CORE.has(migration.instance?.constructor);
}

/**
 * TypeORM orders every migration by its timestamp alone, so an extension's migration written
 * before a core upgrade would run before that upgrade's migrations. Here the core's run first:
 * an extension may rely on the core schema of the build it is mounted in.
 */
class CoreFirstMigrationExecutor extends MigrationExecutor {
  protected override getMigrations(): Migration[] {
    const byTimestamp = super.getMigrations();
    return [
      ...byTimestamp.filter(isCore),
      ...byTimestamp.filter((migration) => !isCore(migration)),
    ];
  }
}

function coreFirst(dataSource: DataSource, runner?: QueryRunner): MigrationExecutor {
  const executor = new CoreFirstMigrationExecutor(dataSource, runner);
  executor.transaction = 'all';
  return executor;
}
