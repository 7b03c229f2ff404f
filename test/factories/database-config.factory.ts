import type { DatabaseConfig } from '../../src/config/app-config.js';
import type { DatabaseTarget } from '../../src/config/settings/connection-string.js';

/**
 * A database configuration for tests that build a data source outside Nest: short timeouts and
 * SQLite's own small cache without memory mapping, unless a test says otherwise. One place, so a
 * setting added to DatabaseConfig is added to every such test at once.
 */
export function buildDatabaseConfig(
  target: DatabaseTarget,
  overrides: Partial<Omit<DatabaseConfig, 'target'>> = {},
): DatabaseConfig {
  return {
    target,
    poolSize: 2,
    connectionTimeoutMs: 5_000,
    statementTimeoutMs: 5_000,
    sqliteCacheSizeMb: 16,
    sqliteMmapSizeMb: 0,
    sqliteSynchronous: 'full',
    accountCache: false,
    ...overrides,
  };
}
