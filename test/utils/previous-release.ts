import { DataSource } from 'typeorm';
import { parseConnectionString } from '../../src/config/settings/connection-string.js';
import { ENTITIES } from '../../src/database/data-source.js';
import { dataSourceOptions } from '../../src/database/data-source-options.js';
import { AuditRetentionWindow1796500000000 } from '../../src/database/migrations/1796500000000-AuditRetentionWindow.js';
import { MIGRATIONS } from '../../src/database/migrations/index.js';
import { buildDatabaseConfig } from '../factories/database-config.factory.js';

/**
 * The migrations of the previous release (the list as it was when it shipped), the last one
 * included: the schema that the upgrade suites fill in that release's layout.
 */
export const PREVIOUS_RELEASE = MIGRATIONS.slice(
  0,
  MIGRATIONS.indexOf(AuditRetentionWindow1796500000000) + 1,
);

/** Gives the database at `connectionString` the previous release's schema, and no more. */
export async function migrateAsPreviousRelease(connectionString: string): Promise<void> {
  const old = new DataSource({
    ...dataSourceOptions(buildDatabaseConfig(parseConnectionString(connectionString)), {
      entities: ENTITIES,
    }),
    migrations: [...PREVIOUS_RELEASE],
  });
  await old.initialize();
  try {
    await old.runMigrations({ transaction: 'all' });
  } finally {
    await old.destroy();
  }
}
