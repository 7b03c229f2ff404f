// Loads the scale run's data set (bench/scale.mjs with --pg) straight into a PostgreSQL database
// the service has migrated: the same users, refresh tokens in every state and audit rows as the
// SQLite loader (lib/scale-data.mjs), generated inside PostgreSQL with generate_series and
// INSERT … SELECT, all in one session: `synchronous_commit = off`, the secondary indexes dropped
// while loading and created again after the rows, rows inserted in primary-key order (so the
// primary keys, which stay, only grow at their end), row triggers off for the load
// (`session_replication_role = replica`: the foreign key of refresh_tokens is not checked row by
// row; the rows are consistent by construction), then `ANALYZE`.
import { createHash, randomBytes } from 'node:crypto';
import { withClient } from './databases.mjs';

const DAY_S = 24 * 60 * 60;
const HOUR_S = 60 * 60;
const USER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';

/**
 * The columns the loader writes, in one place. They follow the schema of
 * src/database/migrations: a column added there without a default must be added here (and to
 * the SELECTs below, in the same order), or the load fails with PostgreSQL's NOT NULL error.
 */
const COLUMNS = {
  users: [
    'id',
    'username',
    'email',
    'passwordHash',
    'failedLoginAttempts',
    'lockoutEnd',
    'isActive',
    'createdAt',
    'lastLoginAt',
    'emailVerifiedAt',
  ],
  sessions: [
    'id',
    'userId',
    'startedAt',
    'authMethods',
    'generation',
    'lastUsedAt',
    'lastIp',
    'lastUserAgent',
    'expiresAt',
    'oldestTokenAt',
    'endedAt',
    'endedByIp',
    'endReason',
  ],
  refresh_tokens: ['tokenHash', 'sessionId', 'generation', 'createdAt'],
  auth_events: ['id', 'type', 'userId', 'email', 'ip', 'userAgentId', 'requestId', 'details'],
};

/** The tables the loader fills: their secondary indexes are created once, after the rows. */
const LOADED_TABLES = Object.keys(COLUMNS);

const columnList = (table) => COLUMNS[table].map((name) => `"${name}"`).join(', ');

/** Seconds since the epoch → timestamp with time zone, as SQL. */
const at = (secondsSql) => `to_timestamp(${secondsSql})`;

const sha256 = (raw) => createHash('sha256').update(raw).digest();

/**
 * The data set of lib/scale-data.mjs (see loadScaleData there for its shape), loaded into the
 * PostgreSQL database at `connectionString`. Returns the same: the e-mail of the account with
 * many sessions, the raw token of the chain's next-to-last generation, row counts, and how many
 * tokens lie past the retention margin.
 */
export async function loadScaleData(
  connectionString,
  { users, tokens, auditRows, sessionsOfOne, chainLength, passwordHash, nowMs, log },
) {
  const now = Math.floor(nowMs / 1000);
  return withClient(connectionString, async (db) => {
    await db.query('SET synchronous_commit = off');
    await db.query("SET maintenance_work_mem = '512MB'");
    await db.query("SET work_mem = '256MB'");
    await db.query('SET session_replication_role = replica');
    const timed = async (label, work) => {
      const started = Date.now();
      await db.query('BEGIN');
      await work();
      await db.query('COMMIT');
      log(`scale load: ${label} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    };

    // Indexes that back no constraint (primary keys and UNIQUE constraints stay: the foreign key
    // depends on users' primary key). Read back from the catalogue, so a changed layout needs
    // nothing here.
    const { rows: indexes } = await db.query(
      `SELECT i.relname AS name, pg_get_indexdef(i.oid) AS sql
         FROM pg_index x
         JOIN pg_class i ON i.oid = x.indexrelid
         JOIN pg_class t ON t.oid = x.indrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace
        WHERE n.nspname = current_schema() AND t.relname = ANY($1)
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)`,
      [LOADED_TABLES],
    );
    await timed(`dropping ${indexes.length} indexes`, async () => {
      for (const { name } of indexes) {
        await db.query(`DROP INDEX "${name}"`);
      }
    });

    await timed(`${users} users`, async () => {
      await db.query('CREATE TEMP TABLE scale_user (i integer PRIMARY KEY, id text NOT NULL)');
      await db.query(
        `INSERT INTO scale_user (i, id)
         SELECT i, gen_random_uuid()::text FROM generate_series(0, $1::integer - 1) AS i`,
        [users],
      );
      await db.query(
        `INSERT INTO users (${columnList('users')})
         SELECT id, 'scale ' || i, 'scale-' || i || '@example.com', $1, 0, NULL, true,
           ${at(`$2::bigint - 400 * ${DAY_S} + i`)}, ${at(`$2::bigint - (i % 30) * ${DAY_S}`)},
           CASE WHEN i % 2 = 0 THEN ${at(`$2::bigint - 390 * ${DAY_S} + i`)} END
         FROM scale_user ORDER BY id`,
        [passwordHash, now],
      );
    });

    const chainPrefix = randomBytes(16).toString('hex');
    const familyCount = Math.max(0, Math.floor((tokens - sessionsOfOne - chainLength) / 5));
    await timed(`${sessionsOfOne + chainLength + familyCount * 5} refresh tokens`, async () => {
      // One row per family: its user, id prefix (32 hex digits), kind (0 expired long ago,
      // 1 expired lately, 2 active), size, and when its newest token was issued.
      await db.query(
        `CREATE TEMP TABLE scale_family (f integer PRIMARY KEY, "userI" integer NOT NULL,
           prefix text NOT NULL, kind integer NOT NULL, size integer NOT NULL, last bigint NOT NULL)`,
      );
      await db.query(
        `INSERT INTO scale_family
         SELECT i, 0, md5(random()::text || i), 2, 1, $2::bigint - ${HOUR_S} - i
         FROM generate_series(0, $1::integer - 1) AS i`,
        [sessionsOfOne, now],
      );
      await db.query('INSERT INTO scale_family VALUES ($1, 1, $2, 2, $3, $4)', [
        sessionsOfOne,
        chainPrefix,
        chainLength,
        now - HOUR_S,
      ]);
      await db.query(
        `INSERT INTO scale_family
         SELECT $2::integer + 1 + i, 2 + i % ($3::integer - 2), md5(random()::text || i),
           CASE WHEN i % 10 < 4 THEN 0 WHEN i % 10 < 6 THEN 1 ELSE 2 END, 5,
           $4::bigint - CASE WHEN i % 10 < 4 THEN 40 * ${DAY_S} WHEN i % 10 < 6 THEN 10 * ${DAY_S}
                             ELSE ${DAY_S} END - (i % 86400)
         FROM generate_series(0, $1::integer - 1) AS i`,
        [familyCount, sessionsOfOne, users, now],
      );
      // Generation g of a family of `size` tokens was issued (size - 1 - g) hours before its
      // newest; every generation but the newest was rotated when the next was issued. A family
      // is a session (decision 0027): its row holds its start, newest generation, last use and
      // expiry; a token row is its digest, its session, generation and creation.
      const created = `f.last - (f.size - 1 - g) * ${HOUR_S}`;
      const sessionId = `substr(f.prefix, 1, 8) || '-' || substr(f.prefix, 9, 4) || '-' || substr(f.prefix, 13, 4) || '-' || substr(f.prefix, 17, 4) || '-' || substr(f.prefix, 21, 12)`;
      await db.query(
        `INSERT INTO sessions (${columnList('sessions')})
         SELECT ${sessionId}, u.id, ${at(`f.last - (f.size - 1) * ${HOUR_S}`)}, 'pwd',
           f.size - 1, ${at('f.last')}, '203.0.113.' || (f.f % 250), $1,
           ${at(`f.last + 7 * ${DAY_S}`)}, ${at(`f.last - (f.size - 1) * ${HOUR_S}`)},
           NULL, NULL, NULL
         FROM scale_family f JOIN scale_user u ON u.i = f."userI"
         ORDER BY 1`,
        [USER_AGENT],
      );
      await db.query(
        `INSERT INTO refresh_tokens (${columnList('refresh_tokens')})
         SELECT sha256(convert_to(f.prefix || ':' || g, 'UTF8')), ${sessionId}, g, ${at(created)}
         FROM scale_family f
         CROSS JOIN LATERAL generate_series(0, f.size - 1) AS g
         ORDER BY 1`,
      );
    });

    // The chain's next-to-last token gets a digest whose raw value the harness knows.
    const reuseToken = randomBytes(32).toString('base64url');
    const chainSessionId = `${chainPrefix.slice(0, 8)}-${chainPrefix.slice(8, 12)}-${chainPrefix.slice(12, 16)}-${chainPrefix.slice(16, 20)}-${chainPrefix.slice(20, 32)}`;
    await db.query(
      'UPDATE refresh_tokens SET "tokenHash" = $1 WHERE "sessionId" = $2 AND generation = $3',
      [sha256(reuseToken), chainSessionId, chainLength - 2],
    );

    await timed(`${auditRows} audit rows`, async () => {
      await db.query(
        // The lean layout (decision 0028): UUIDv7 bytes that start with the event's millisecond,
        // and the user agent by reference (added once, by the service's own function).
        `INSERT INTO auth_events (${columnList('auth_events')})
         SELECT decode(lpad(to_hex(($2::bigint - 30 * ${DAY_S}) * 1000
             + k::bigint * (30::bigint * ${DAY_S} * 1000) / $3::bigint), 12, '0')
             || '7' || substr(md5(random()::text), 1, 3)
             || '8' || substr(md5(random()::text), 1, 15), 'hex'),
           CASE WHEN k % 10 < 8 THEN 'token_refreshed' ELSE 'login_succeeded' END,
           u.id, CASE WHEN k % 10 < 8 THEN NULL ELSE 'scale-' || u.i || '@example.com' END,
           '203.0.113.' || (k % 250), (SELECT keygate_user_agent_id($4::varchar)),
           md5(random()::text),
           CASE WHEN k % 10 < 8
             THEN '{"familyId":"' || gen_random_uuid() || '","generation":' || (k % 50) || '}'
             ELSE '{"familyId":"' || gen_random_uuid() || '"}' END
         FROM generate_series(0, $1::integer - 1) AS k
         JOIN scale_user u ON u.i = k % $5::integer
         ORDER BY 1`,
        [auditRows, now, auditRows, USER_AGENT, users],
      );
    });

    await timed(`creating ${indexes.length} indexes`, async () => {
      for (const { sql } of indexes) {
        await db.query(sql);
      }
    });
    const analyzeStarted = Date.now();
    await db.query(`ANALYZE ${LOADED_TABLES.join(', ')}`);
    log(`scale load: ANALYZE in ${((Date.now() - analyzeStarted) / 1000).toFixed(1)} s`);

    const count = async (table) =>
      Number((await db.query(`SELECT COUNT(*) AS n FROM ${table}`)).rows[0].n);
    // What the purge deletes with a week's lifetime and retention: the tokens of sessions that
    // expired a week ago, and the older generations created two weeks ago.
    const purgeable = Number(
      (
        await db.query(
          'SELECT COUNT(*) AS n FROM refresh_tokens t JOIN sessions s ON s.id = t."sessionId" ' +
            'WHERE s."expiresAt" < $1 OR (t.generation < s.generation AND t."createdAt" < $2)',
          [new Date(nowMs - 7 * DAY_S * 1000), new Date(nowMs - 14 * DAY_S * 1000)],
        )
      ).rows[0].n,
    );
    return {
      manySessionsEmail: 'scale-0@example.com',
      reuseToken,
      rows: {
        users: await count('users'),
        sessions: await count('sessions'),
        refresh_tokens: await count('refresh_tokens'),
        auth_events: await count('auth_events'),
      },
      purgeable,
    };
  });
}

/** Row counts of the given tables. */
export function rowCounts(connectionString, tables) {
  return withClient(connectionString, async (db) => {
    const counts = {};
    for (const table of tables) {
      counts[table] = Number((await db.query(`SELECT COUNT(*) AS n FROM ${table}`)).rows[0].n);
    }
    return counts;
  });
}

/** The password hash of one account, to give every loaded user the same, known password. */
export function passwordHashOf(connectionString, email) {
  return withClient(
    connectionString,
    async (db) =>
      (await db.query('SELECT "passwordHash" AS hash FROM users WHERE email = $1', [email])).rows[0]
        .hash,
  );
}

/** The whole database's size on disk (pg_database_size). */
export function databaseBytes(connectionString) {
  return withClient(connectionString, async (db) =>
    Number((await db.query('SELECT pg_database_size(current_database()) AS n')).rows[0].n),
  );
}
