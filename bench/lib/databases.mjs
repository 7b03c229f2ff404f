// Fresh, uniquely named databases for the service: a SQLite file in the run's temporary folder,
// or a database on the local PostgreSQL server that is dropped when the run ends.
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { URL } from 'node:url';
import pg from 'pg';

/** The PostgreSQL server the --pg mode uses: local, trust authentication, user postgres. */
export const POSTGRES_SERVER_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

let counter = 0;

/** A new SQLite file path (created by the service on start) and how to delete it. */
export function sqliteDatabase(dir, label) {
  const path = join(dir, `${label}-${++counter}.db`);
  return {
    connectionString: path,
    drop: () =>
      Promise.all(['', '-wal', '-shm'].map((suffix) => rm(path + suffix, { force: true }))),
  };
}

/** A new empty PostgreSQL database and how to drop it (forcing out any open connection). */
export async function postgresDatabase(label) {
  // An unquoted identifier: a label such as `session-check` keeps only letters, digits and _.
  const safeLabel = label.replace(/[^a-z0-9_]/gi, '_');
  const name = `keygate_bench_${safeLabel}_${Date.now()}_${randomBytes(3).toString('hex')}`;
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(POSTGRES_SERVER_URL);
  url.pathname = `/${name}`;
  return {
    connectionString: url.toString(),
    drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

async function admin(statement) {
  const client = new pg.Client({ connectionString: POSTGRES_SERVER_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** Runs `work` with a client of its own on `connectionString`, closed afterwards. */
export async function withClient(connectionString, work) {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
