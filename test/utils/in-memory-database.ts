import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source-options.js';
import { runMigrations } from '../../src/database/run-migrations.js';

/** A fresh, initialised SQLite database in memory with every migration run. Destroy it after use. */
export async function createInMemoryDataSource(): Promise<DataSource> {
  const dataSource = new DataSource(
    dataSourceOptions({
      target: { type: 'sqlite', path: ':memory:' },
      poolSize: 1,
      connectionTimeoutMs: 1_000,
      statementTimeoutMs: 1_000,
      sqliteSynchronous: 'full',
    }),
  );
  await dataSource.initialize();
  await runMigrations(dataSource);
  return dataSource;
}
