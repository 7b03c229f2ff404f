/* eslint-disable no-restricted-syntax -- the database reaches Jest through the environment. */
// `npm run test:pg`: the end-to-end suites against PostgreSQL. Creates a uniquely named database
// on the server that TEST_PG_URL names, runs the suites with it, and drops it, pass or fail.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import process from 'node:process';
import { URL } from 'node:url';
import pg from 'pg';

const serverUrl = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const databaseName = `keygate_test_${Date.now()}_${randomBytes(3).toString('hex')}`;

async function admin(sql) {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

await admin(`CREATE DATABASE ${databaseName}`);
let status = 1;
try {
  const url = new URL(serverUrl);
  url.pathname = `/${databaseName}`;
  const result = spawnSync(
    'npx',
    ['jest', '--selectProjects', 'e2e', 'stress', ...process.argv.slice(2)],
    {
      stdio: 'inherit',
      env: {
        ...process.env,
        TZ: 'UTC',
        NODE_OPTIONS: '--experimental-vm-modules',
        KEYGATE_TEST_POSTGRES_URL: url.toString(),
      },
    },
  );
  status = result.status ?? 1;
} finally {
  await admin(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
}
process.exit(status);
