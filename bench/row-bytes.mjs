// `npm run bench -- --row-bytes [--pg] [--quick]`: what one refresh leaves behind in the database,
// table by table and index by index, automatic indexes included (SQLite's sqlite_autoindex_* of
// a text primary key or a unique column, PostgreSQL's *_pkey). The built service on an empty
// database registers a few accounts, then refreshes their sessions through the API `refreshes`
// times in all; the growth of every table and index between the two measurements, divided by
// the number of refreshes, is the figure. SQLite: the `dbstat` virtual table (compiled into
// better-sqlite3's SQLite), pages in use; PostgreSQL: pg_relation_size of each index and
// pg_table_size of each table (its main fork, free-space and visibility maps, TOAST), file sizes
// as written, dead row versions left by the rotations' updates included (no VACUUM: what
// autovacuum reclaims is reused, never returned). Figures are page-grained, so they settle
// only over thousands of refreshes. Writes bench/results/latest-row-bytes{,-pg}.md and .json.
import { randomBytes } from 'node:crypto';
/* global setImmediate */
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { postJson } from './lib/api.mjs';
import { postgresDatabase, sqliteDatabase } from './lib/databases.mjs';
import {
  SERVICE_ENTRY,
  freePort,
  serviceEnv,
  spawnNode,
  stopAll,
  waitForFirstAnswer,
} from './lib/processes.mjs';

const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));
const PASSWORD = 'S3cure!bytes-pass';
/** Sessions refreshed in turn, so that several families grow side by side, as in service. */
const SESSIONS = 8;
/** Refreshes in flight at once. */
const CONCURRENCY = 4;

/** The tables a refresh writes to; the others are listed when they grow too. */
const WATCHED = ['refresh_tokens', 'sessions', 'auth_events'];

export async function runRowBytes({ pg: onPostgres = false, quick = false }) {
  const refreshes = quick ? 500 : 10_000;
  const tmp = await mkdtemp(join(tmpdir(), 'keygate-row-bytes-'));
  const database = onPostgres ? await postgresDatabase('rowbytes') : sqliteDatabase(tmp, 'rows');
  const measure = onPostgres ? postgresSizes : sqliteSizes;
  let failed = true;
  try {
    const port = await freePort();
    const service = spawnNode({
      name: 'service',
      args: [SERVICE_ENTRY],
      env: serviceEnv({
        port,
        secret: randomBytes(36).toString('base64url'),
        connectionString: database.connectionString,
      }),
      cwd: tmp,
      port,
      logFile: join(tmp, 'service.log'),
    });
    await waitForFirstAnswer(service);
    const tokens = [];
    for (let i = 0; i < SESSIONS; i++) {
      const body = await postJson(service.url, '/api/auth/register', {
        username: `bytes ${i}`,
        email: `bytes-${i}-${Date.now()}@example.com`,
        password: PASSWORD,
      });
      tokens.push(body.refreshToken);
    }
    const before = await measure(database.connectionString);
    let next = 0;
    const worker = async () => {
      while (next < refreshes) {
        next++;
        const slot = next % SESSIONS;
        // One refresh per session at a time: each presents the token the last one received.
        const token = tokens[slot];
        tokens[slot] = null;
        if (token === null) {
          next--;
          await new Promise((resolve) => setImmediate(resolve));
          continue;
        }
        const body = await postJson(service.url, '/api/auth/refresh', { refreshToken: token });
        tokens[slot] = body.refreshToken;
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    await service.stop();
    const after = await measure(database.connectionString);
    const rows = perRefresh(before, after, refreshes);
    const result = {
      engine: onPostgres ? 'postgres' : 'sqlite',
      refreshes,
      sessions: SESSIONS,
      quick,
      measuredAt: new Date().toISOString(),
      node: process.version,
      objects: rows,
      bytesPerRefresh: Math.round(rows.reduce((sum, row) => sum + row.bytesPerRefresh, 0)),
    };
    const name = `latest-row-bytes${onPostgres ? '-pg' : ''}${quick ? '-quick' : ''}`;
    writeFileSync(join(RESULTS_DIR, `${name}.json`), `${JSON.stringify(result, null, 2)}\n`);
    writeFileSync(join(RESULTS_DIR, `${name}.md`), markdown(result));
    process.stdout.write(markdown(result));
    failed = false;
  } finally {
    await stopAll();
    await database.drop();
    await rm(tmp, { recursive: true, force: true });
  }
  return failed ? 1 : 0;
}

/** Bytes per refresh of every table or index that grew, the watched tables' first. */
function perRefresh(before, after, refreshes) {
  return Object.entries(after)
    .map(([key, object]) => ({
      ...object,
      bytesPerRefresh: round1((object.bytes - (before[key]?.bytes ?? 0)) / refreshes),
    }))
    .filter((row) => row.bytesPerRefresh > 0 || WATCHED.includes(row.table))
    .sort(
      (a, b) =>
        order(a.table) - order(b.table) ||
        a.table.localeCompare(b.table) ||
        Number(a.kind === 'index') - Number(b.kind === 'index') ||
        a.name.localeCompare(b.name),
    );
}

function order(table) {
  const i = WATCHED.indexOf(table);
  return i === -1 ? WATCHED.length : i;
}

/** Pages in use per table and index, automatic indexes attributed to their table. */
function sqliteSizes(path) {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db
      .prepare(
        `SELECT d.name AS name, s.tbl_name AS "table", s.type AS kind, SUM(d.pgsize) AS bytes
         FROM dbstat d JOIN sqlite_schema s ON s.name = d.name GROUP BY d.name`,
      )
      .all();
    return Object.fromEntries(
      rows.map((row) => [
        row.name,
        {
          name: row.name,
          table: row.table,
          kind: row.kind === 'index' ? 'index' : 'table',
          bytes: row.bytes,
        },
      ]),
    );
  } finally {
    db.close();
  }
}

/** Sizes of every table (pg_table_size) and index (pg_relation_size) of the public schema. */
async function postgresSizes(connectionString) {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT c.relname AS name, COALESCE(t.relname, c.relname) AS "table",
         CASE WHEN c.relkind = 'i' THEN 'index' ELSE 'table' END AS kind,
         CASE WHEN c.relkind = 'i' THEN pg_relation_size(c.oid) ELSE pg_table_size(c.oid) END
           AS bytes
       FROM pg_class c
       LEFT JOIN pg_index i ON i.indexrelid = c.oid
       LEFT JOIN pg_class t ON t.oid = i.indrelid
       WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'i')`,
    );
    return Object.fromEntries(rows.map((row) => [row.name, { ...row, bytes: Number(row.bytes) }]));
  } finally {
    await client.end();
  }
}

function markdown(result) {
  const lines = [
    `# Bytes per refresh (${result.engine})`,
    '',
    `${result.refreshes} refreshes through the API over ${result.sessions} sessions, ` +
      `${result.measuredAt}, Node ${result.node}` +
      `${result.quick ? ' (quick: page-grained, not meaningful)' : ''}. ` +
      'Produced by `npm run bench -- --row-bytes' +
      `${result.engine === 'postgres' ? ' --pg' : ''}\` (bench/row-bytes.mjs).`,
    '',
    '| Table | Object | Kind | Bytes per refresh |',
    '|---|---|---|---:|',
    ...result.objects.map(
      (row) => `| ${row.table} | ${row.name} | ${row.kind} | ${row.bytesPerRefresh} |`,
    ),
    `| **all** | | | **${result.bytesPerRefresh}** |`,
    '',
  ];
  return lines.join('\n');
}

const round1 = (value) => Math.round(value * 10) / 10;
