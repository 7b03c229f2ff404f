import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/**
 * The PostgreSQL database this test run may use, set by `npm run test:pg` (test/run-pg.mjs);
 * unset, the suite runs on SQLite files.
 */
// eslint-disable-next-line no-restricted-syntax
export const TEST_POSTGRES_URL = process.env.KEYGATE_TEST_POSTGRES_URL;

export const onPostgres = TEST_POSTGRES_URL !== undefined;

/** `describe` on the engine a block is about, `describe.skip` on the other. */
export const describeOnSqlite = onPostgres ? describe.skip : describe;
export const describeOnPostgres = onPostgres ? describe : describe.skip;

/** An empty database for one test app: a SQLite file, or a PostgreSQL schema of its own. */
export interface TestDatabase {
  /** The value for ConnectionStrings__DefaultConnection. */
  readonly connectionString: string;
  /** Runs SQL directly, outside the service; `$1`-style parameters work on both engines. */
  query<T = Record<string, unknown>>(sql: string, parameters?: readonly unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  return TEST_POSTGRES_URL === undefined
    ? createSqliteFile()
    : createPostgresSchema(TEST_POSTGRES_URL);
}

async function createSqliteFile(): Promise<TestDatabase> {
  const directory = mkdtempSync(join(tmpdir(), 'keygate-e2e-'));
  const path = join(directory, 'keygate.db');
  const { default: Database } = await import('better-sqlite3');
  return {
    connectionString: path,
    query: <T>(sql: string, parameters: readonly unknown[] = []) => {
      const db = new Database(path);
      try {
        const statement = db.prepare(sql.replace(/\$\d+/g, '?'));
        return Promise.resolve(
          (statement.reader
            ? statement.all(...parameters)
            : (statement.run(...parameters), [])) as T[],
        );
      } finally {
        db.close();
      }
    },
    drop: () => {
      rmSync(directory, { recursive: true, force: true });
      return Promise.resolve();
    },
  };
}

/**
 * A schema per app inside the run's database: apps in parallel Jest workers never see each
 * other's rows, and the search path in the URL makes the service and raw queries use it.
 */
async function createPostgresSchema(databaseUrl: string): Promise<TestDatabase> {
  const schema = `app_${process.pid}_${randomBytes(4).toString('hex')}`;
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const connectionString = url.toString();
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await admin.end();
  }
  return {
    connectionString,
    query: async <T>(sql: string, parameters: readonly unknown[] = []) => {
      const client = new pg.Client({ connectionString });
      await client.connect();
      try {
        return (await client.query(sql, [...parameters])).rows as T[];
      } finally {
        await client.end();
      }
    },
    drop: async () => {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}
