// Loads a large, realistic data set straight into a migrated SQLite file, for the scale run
// (bench/scale.mjs): users, sessions and their refresh tokens in every state, audit rows. Everything is generated
// by SQL inside SQLite (recursive CTEs, one transaction per table, no journal, the secondary
// indexes dropped while loading and built again after, from sorted data), so a million users and
// ten million rows load in minutes, not hours. The column lists follow the schema of
// src/database/migrations: a column added there without a default must be added here too (the
// load fails with SQLite's NOT NULL error otherwise).
import { createHash, randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';

const DAY_S = 24 * 60 * 60;
const HOUR_S = 60 * 60;
const USER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';

/** The tables the loader fills: their secondary indexes are rebuilt once, after the rows. */
const LOADED_TABLES = ['users', 'sessions', 'refresh_tokens', 'auth_events'];

/** A random UUID-shaped text, as SQL. */
const UUID_SQL =
  "lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(2)) || '-' || hex(randomblob(6)))";

/** Seconds since the epoch → the text TypeORM stores in SQLite, as SQL. */
const at = (secondsSql) => `strftime('%Y-%m-%d %H:%M:%f', ${secondsSql}, 'unixepoch')`;

const sha256 = (raw) => createHash('sha256').update(raw).digest();

/**
 * The data set of the issue: `users` users, `tokens` refresh tokens and `auditRows` audit rows.
 * Tokens: one account with `sessionsOfOne` active sessions, one session rotated `chainLength`
 * times, and families of five tokens (four rotated, the newest active or expired) over the other
 * users: 40 % expired beyond the retention margin (what the cleanup deletes), 20 % expired
 * within it, 40 % active.
 *
 * Returns what the measurements need: the e-mail of the account with many sessions, the raw
 * token of the chain's next-to-last generation (presenting it is reuse), and row counts.
 */
export function loadScaleData(
  path,
  { users, tokens, auditRows, sessionsOfOne, chainLength, passwordHash, nowMs, log },
) {
  const now = Math.floor(nowMs / 1000);
  const db = new Database(path);
  try {
    // Nothing else has the file open: no syncing while loading, a large cache, and the rollback
    // journal in memory. The file arrives in WAL mode, which `journal_mode = OFF` leaves in place
    // without a word (better-sqlite3 opens in defensive mode, which refuses OFF): every loaded
    // page went through the write-ahead log and its checkpoints. MEMORY is honoured.
    db.pragma('journal_mode = MEMORY');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -1048576');
    db.pragma('temp_store = MEMORY');
    const timed = (label, work) => {
      const started = Date.now();
      db.transaction(work)();
      log(`scale load: ${label} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    };
    // Inserting rows in random key order into every index costs a random page per row and
    // index; building an index after the rows sorts them once. The indexes are whatever the
    // migrations made (read back from the schema, so a changed layout needs nothing here);
    // PRIMARY KEY and UNIQUE constraints stay, as SQLite cannot drop them: rows are inserted in
    // the order of their (random) primary key instead, so that index only ever grows at its end.
    const indexes = db
      .prepare(
        `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL
           AND tbl_name IN (${LOADED_TABLES.map(() => '?').join(', ')})`,
      )
      .all(...LOADED_TABLES);
    timed(`dropping ${indexes.length} indexes`, () => {
      indexes.forEach(({ name }) => db.exec(`DROP INDEX "${name}"`));
    });

    timed(`${users} users`, () => {
      db.exec('CREATE TEMP TABLE scale_user (i INTEGER PRIMARY KEY, id TEXT NOT NULL)');
      db.prepare(
        `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO scale_user (i, id) SELECT i, ${UUID_SQL} FROM n`,
      ).run(users - 1);
      db.prepare(
        `INSERT INTO users (id, username, email, "passwordHash", "failedLoginAttempts",
           "lockoutEnd", "isActive", "createdAt", "lastLoginAt", "emailVerifiedAt")
         SELECT id, 'scale ' || i, 'scale-' || i || '@example.com', ?, 0, NULL, 1,
           ${at(`? - 400 * ${DAY_S} + i`)}, ${at(`? - (i % 30) * ${DAY_S}`)},
           CASE WHEN i % 2 = 0 THEN ${at(`? - 390 * ${DAY_S} + i`)} END
         FROM scale_user ORDER BY id`,
      ).run(passwordHash, now, now, now);
    });

    const chainPrefix = randomBytes(16).toString('hex').slice(0, 32);
    const familyCount = Math.max(0, Math.floor((tokens - sessionsOfOne - chainLength) / 5));
    timed(`${sessionsOfOne + chainLength + familyCount * 5} refresh tokens`, () => {
      // One row per family: its user, id prefix, kind (0 expired long ago, 1 expired lately,
      // 2 active), size, and when its newest token was issued.
      db.exec(
        `CREATE TEMP TABLE scale_family (f INTEGER PRIMARY KEY, userI INTEGER NOT NULL,
           prefix TEXT NOT NULL, kind INTEGER NOT NULL, size INTEGER NOT NULL, last INTEGER NOT NULL)`,
      );
      db.prepare(
        `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO scale_family SELECT i, 0, lower(hex(randomblob(16))), 2, 1,
           ? - ${HOUR_S} - i FROM n`,
      ).run(sessionsOfOne - 1, now);
      db.prepare('INSERT INTO scale_family VALUES (?, 1, ?, 2, ?, ?)').run(
        sessionsOfOne,
        chainPrefix,
        chainLength,
        now - HOUR_S,
      );
      db.prepare(
        `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO scale_family
         SELECT ? + 1 + i, 2 + i % (? - 2), lower(hex(randomblob(16))),
           CASE WHEN i % 10 < 4 THEN 0 WHEN i % 10 < 6 THEN 1 ELSE 2 END, 5,
           ? - CASE WHEN i % 10 < 4 THEN 40 * ${DAY_S} WHEN i % 10 < 6 THEN 10 * ${DAY_S}
                    ELSE ${DAY_S} END - (i % 86400)
         FROM n`,
      ).run(familyCount - 1, sessionsOfOne, users, now);
      // Generation g of a family of `size` tokens was issued (size - 1 - g) hours before its
      // newest; every generation but the newest was rotated when the next was issued. A family
      // is a session (decision 0027): its row holds its start, newest generation, last use and
      // expiry; a token row is its digest, its session, generation and creation.
      const created = `last - (size - 1 - g) * ${HOUR_S}`;
      const sessionId = `substr(prefix, 1, 8) || '-' || substr(prefix, 9, 4) || '-' || substr(prefix, 13, 4) || '-' || substr(prefix, 17, 4) || '-' || substr(prefix, 21, 12)`;
      db.prepare(
        `INSERT INTO sessions (id, "userId", "startedAt", "authMethods", generation, "lastUsedAt",
           "lastIp", "lastUserAgent", "expiresAt", "oldestTokenAt", "endedAt", "endedByIp",
           "endReason")
         SELECT ${sessionId}, u.id, ${at(`last - (size - 1) * ${HOUR_S}`)}, 'pwd', size - 1,
           ${at('last')}, '203.0.113.' || (f % 250), ?, ${at(`last + 7 * ${DAY_S}`)},
           ${at(`last - (size - 1) * ${HOUR_S}`)}, NULL, NULL, NULL
         FROM scale_family JOIN scale_user u ON u.i = scale_family.userI
         ORDER BY 1`,
      ).run(USER_AGENT);
      const insertTokens = db.prepare(
        `WITH RECURSIVE gen(g) AS (SELECT 0 UNION ALL SELECT g + 1 FROM gen WHERE g < ?)
         INSERT INTO refresh_tokens ("tokenHash", "sessionId", generation, "createdAt")
         SELECT randomblob(32), ${sessionId}, g, ${at(created)}
         FROM scale_family CROSS JOIN gen
         WHERE gen.g < scale_family.size AND scale_family.size <= ?
         ORDER BY 1`,
      );
      // Small families first, against a five-row generator; the long chain on its own.
      insertTokens.run(4, 5);
      db.prepare('DELETE FROM scale_family WHERE size <= 5').run();
      insertTokens.run(chainLength - 1, chainLength);
    });

    // The chain's next-to-last token gets a digest whose raw value the harness knows.
    const reuseToken = randomBytes(32).toString('base64url');
    const chainSessionId = `${chainPrefix.slice(0, 8)}-${chainPrefix.slice(8, 12)}-${chainPrefix.slice(12, 16)}-${chainPrefix.slice(16, 20)}-${chainPrefix.slice(20, 32)}`;
    db.prepare(
      'UPDATE refresh_tokens SET "tokenHash" = ? WHERE "sessionId" = ? AND generation = ?',
    ).run(sha256(reuseToken), chainSessionId, chainLength - 2);

    timed(`${auditRows} audit rows`, () => {
      // The lean layout (decision 0028): UUIDv7 bytes that start with the event's millisecond,
      // inserted in their order, and the user agent by reference.
      db.prepare('INSERT OR IGNORE INTO user_agents ("userAgent") VALUES (?)').run(USER_AGENT);
      db.prepare(
        `WITH RECURSIVE n(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM n WHERE k < ?)
         INSERT INTO auth_events (id, type, "userId", email, ip, "userAgentId", "requestId",
           details)
         SELECT unhex(printf('%012x', (? - 30 * ${DAY_S}) * 1000 + k * (30 * ${DAY_S} * 1000) / ?)
             || '7' || substr(hex(randomblob(2)), 2) || '8' || substr(hex(randomblob(8)), 2)),
           CASE WHEN k % 10 < 8 THEN 'token_refreshed' ELSE 'login_succeeded' END,
           u.id, CASE WHEN k % 10 < 8 THEN NULL ELSE 'scale-' || u.i || '@example.com' END,
           '203.0.113.' || (k % 250),
           (SELECT id FROM user_agents WHERE "userAgent" = ?), lower(hex(randomblob(16))),
           CASE WHEN k % 10 < 8
             THEN '{"familyId":"' || ${UUID_SQL} || '","generation":' || (k % 50) || '}'
             ELSE '{"familyId":"' || ${UUID_SQL} || '"}' END
         FROM n JOIN scale_user u ON u.i = n.k % ?
         ORDER BY 1`,
      ).run(auditRows - 1, now, auditRows, USER_AGENT, users);
    });

    timed(`rebuilding ${indexes.length} indexes`, () => {
      indexes.forEach(({ sql }) => db.exec(sql));
    });

    const count = (table) => db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get().n;
    // What the purge deletes with a week's lifetime and retention: the tokens of sessions that
    // expired a week ago, and the older generations created two weeks ago.
    const sqliteAt = (ms) => new Date(ms).toISOString().replace('T', ' ').slice(0, 23);
    const purgeable = db
      .prepare(
        'SELECT COUNT(*) AS n FROM refresh_tokens t JOIN sessions s ON s.id = t."sessionId" ' +
          'WHERE s."expiresAt" < ? OR (t.generation < s.generation AND t."createdAt" < ?)',
      )
      .get(sqliteAt(nowMs - 7 * DAY_S * 1000), sqliteAt(nowMs - 14 * DAY_S * 1000)).n;
    const rows = {
      users: count('users'),
      sessions: count('sessions'),
      refresh_tokens: count('refresh_tokens'),
      auth_events: count('auth_events'),
    };
    db.exec('ANALYZE');
    db.pragma('journal_mode = WAL');
    return {
      manySessionsEmail: 'scale-0@example.com',
      reuseToken,
      rows,
      purgeable,
    };
  } finally {
    db.close();
  }
}

/** Row counts of the given tables. */
export function rowCounts(path, tables) {
  const db = new Database(path, { readonly: true });
  try {
    return Object.fromEntries(
      tables.map((table) => [table, db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get().n]),
    );
  } finally {
    db.close();
  }
}

/** The password hash of one account, to give every loaded user the same, known password. */
export function passwordHashOf(path, email) {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT "passwordHash" AS hash FROM users WHERE email = ?').get(email).hash;
  } finally {
    db.close();
  }
}
