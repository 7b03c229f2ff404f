/* eslint-disable no-restricted-syntax -- the database reaches Jest through the environment. */
// `npm run test:pg`: the end-to-end suites against PostgreSQL. Creates a uniquely named database
// on the server that TEST_PG_URL names, runs the suites with it, and drops it, pass or fail.
//
// Then, on the same database, the outage suites (test/outage), which stop and restart the
// PostgreSQL server itself. They run alone and in band, after the other suites have finished,
// because stopping the server must never happen while another test uses it. They run whether or
// not the first run passed: their verdict is independent of it, and a failing end-to-end test
// should not hide an outage result. Only an interrupted first run (Ctrl-C, a kill) skips them.
// The exit status is non-zero if either run failed.
//
// `npm run test:outage` (`--only-outage`) runs only the outage suites. They need to run as root
// next to a local cluster that pg_ctlcluster can stop and start. `--skip-outage` runs only the
// end-to-end suites: for a machine where other work uses the same server, which an outage stops.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import process from 'node:process';
import { setTimeout as delay } from 'node:timers/promises';
import { URL } from 'node:url';
import pg from 'pg';

const serverUrl = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const databaseName = `keygate_test_${Date.now()}_${randomBytes(3).toString('hex')}`;
const OWN_FLAGS = ['--only-outage', '--skip-outage'];
const onlyOutage = process.argv.includes('--only-outage');
const skipOutage = process.argv.includes('--skip-outage');
const jestArguments = process.argv.slice(2).filter((argument) => !OWN_FLAGS.includes(argument));
/**
 * Suites whose verdict does not depend on the database: they pack the packages or read the
 * contract and type-check clients against it (a few tsc runs each), and `npm test` has just run
 * them. The service they talk to on the way is covered on PostgreSQL by the route suites.
 */
const ENGINE_INDEPENDENT = [
  'test/client-package.e2e-spec.ts',
  'test/resource-package.e2e-spec.ts',
  'test/typed-client.e2e-spec.ts',
  'test/admin-openapi.e2e-spec.ts',
  'test/openapi.e2e-spec.ts',
];

async function admin(sql) {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Like admin(), but waits up to a minute for a server that an outage test is restarting. */
async function adminWhenUp(sql) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await admin(sql);
      return;
    } catch (error) {
      if (Date.now() > deadline) {
        throw error;
      }
      await delay(500);
    }
  }
}

function jest(projects, extra, env) {
  // The caller's paths and flags come first: after `--selectProjects` a path would be read as
  // one more project name, and the whole suite would run.
  return spawnSync('npx', ['jest', ...jestArguments, ...extra, '--selectProjects', ...projects], {
    stdio: 'inherit',
    env: {
      ...process.env,
      TZ: 'UTC',
      NODE_OPTIONS: '--experimental-vm-modules',
      KEYGATE_TEST_POSTGRES_URL: databaseUrl(),
      ...env,
    },
  });
}

function databaseUrl() {
  const url = new URL(serverUrl);
  url.pathname = `/${databaseName}`;
  return url.toString();
}

await admin(`CREATE DATABASE ${databaseName}`);
let status = 1;
try {
  let interrupted = false;
  status = 0;
  if (!onlyOutage) {
    const result = jest(
      ['e2e', 'stress'],
      [
        '--testPathIgnorePatterns',
        ...ENGINE_INDEPENDENT.map((path) => `/${path.replaceAll('.', '\\.')}$`),
      ],
      {},
    );
    status = result.status ?? 1;
    interrupted = result.signal !== null;
  }
  if (!interrupted && !skipOutage) {
    // A path or name filter meant for the suites above may match no outage test.
    const outage = jest(['outage'], ['--runInBand', '--passWithNoTests'], {
      KEYGATE_TEST_OUTAGE: '1',
    });
    status = status !== 0 ? status : (outage.status ?? 1);
  }
} finally {
  await adminWhenUp(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
}
process.exit(status);
