import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source-options.js';

/** A fresh, initialised SQLite database in memory with every migration run. Destroy it after use. */
export async function createInMemoryDataSource(): Promise<DataSource> {
  const dataSource = new DataSource({
    ...dataSourceOptions({ type: 'sqlite', path: ':memory:' }),
    migrationsRun: true,
  });
  await dataSource.initialize();
  return dataSource;
}
