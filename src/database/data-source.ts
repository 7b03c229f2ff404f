import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { parseConnectionString } from '../config/connection-string.js';
import { DEFAULT_CONNECTION_STRING } from '../config/environment-variables.js';
import { dataSourceOptions } from './data-source-options.js';

// For the TypeORM CLI (`npm run migration:*`): the database the service would use, read from the
// environment or `.env` (the environment wins), without requiring the rest of the configuration.
if (existsSync('.env')) {
  process.loadEnvFile('.env');
}

export default new DataSource(
  dataSourceOptions({
    target: parseConnectionString(
      process.env.ConnectionStrings__DefaultConnection ?? DEFAULT_CONNECTION_STRING,
    ),
    poolSize: 2,
    connectionTimeoutMs: 10_000,
    statementTimeoutMs: 60_000,
    // Migrations are rare and must never be half-remembered after a power cut.
    sqliteSynchronous: 'full',
  }),
);
