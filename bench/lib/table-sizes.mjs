// Every table and index of a database with its size and every table with its row count, found in
// the database's own catalogue rather than named here, so that a table a module adds (sessions,
// user agents...) shows in the scale run's growth without a change to the harness.
import Database from 'better-sqlite3';
import { withClient } from './databases.mjs';

/**
 * Bytes of every table and index. SQLite: pages in use from `dbstat`, the automatic indexes of
 * text primary keys and unique columns (`sqlite_autoindex_*`) and SQLite's own tables included.
 * PostgreSQL: `pg_relation_size` (main fork) of every table and index of the current schema; a
 * primary key is named after its table.
 */
export function relationSizes(engine, connectionString) {
  if (engine === 'pg') {
    return withClient(connectionString, async (db) => {
      const { rows } = await db.query(
        `SELECT CASE WHEN x.indisprimary THEN t.relname || ' (primary key)' ELSE c.relname END AS name,
                pg_relation_size(c.oid) AS bytes
           FROM pg_class c
           JOIN pg_namespace n ON n.oid = c.relnamespace
           LEFT JOIN pg_index x ON x.indexrelid = c.oid
           LEFT JOIN pg_class t ON t.oid = x.indrelid
          WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'i', 'p', 'I')`,
      );
      return Object.fromEntries(rows.map((row) => [row.name, Number(row.bytes)]));
    });
  }
  return withSqlite(connectionString, (db) =>
    Object.fromEntries(
      db
        .prepare('SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY name')
        .all()
        .map((row) => [row.name, row.bytes]),
    ),
  );
}

/** Row count of every table (SQLite's own tables left out). */
export function tableRowCounts(engine, connectionString) {
  if (engine === 'pg') {
    return withClient(connectionString, async (db) => {
      const { rows } = await db.query(
        'SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename',
      );
      const counts = {};
      for (const { tablename } of rows) {
        const quoted = `"${tablename.replaceAll('"', '""')}"`;
        counts[tablename] = Number(
          (await db.query(`SELECT COUNT(*) AS n FROM ${quoted}`)).rows[0].n,
        );
      }
      return counts;
    });
  }
  return withSqlite(connectionString, (db) => {
    const tables = db
      .prepare(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      )
      .pluck()
      .all();
    return Object.fromEntries(
      tables.map((table) => [
        table,
        db.prepare(`SELECT COUNT(*) AS n FROM "${table.replaceAll('"', '""')}"`).get().n,
      ]),
    );
  });
}

/**
 * Per 10,000 of `done`, the change of each entry between `before` and `after`, every name of
 * either included (0 for what did not change, so the table lists everything the run found).
 */
export function growthPer10000(before, after, done) {
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return Object.fromEntries(
    names.map((name) => [
      name,
      (((after[name] ?? 0) - (before[name] ?? 0)) / Math.max(1, done)) * 10_000,
    ]),
  );
}

function withSqlite(path, work) {
  const db = new Database(path, { readonly: true });
  try {
    return work(db);
  } finally {
    db.close();
  }
}
