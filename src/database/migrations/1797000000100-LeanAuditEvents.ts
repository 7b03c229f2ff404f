import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { timestampType } from '../column-types.js';
import { AUTH_EVENTS_APPEND_ONLY_MESSAGE } from './1735689600100-CreateAuthEvents.js';

/**
 * The lean audit layout (decision 0028). `auth_events` is rebuilt: its id, a UUIDv7, is stored as
 * its 16 bytes and keys the table (WITHOUT ROWID on SQLite), which makes it the time index as
 * well; `occurredAt` and its two indexes go (the instant is the id's first 48 bits, which the
 * service wrote from the same clock reading); `(userId, id)` replaces `(userId, occurredAt)`; the
 * user agent text moves to `user_agents`, one row per distinct text, referred to by id. Every row
 * is copied, none is lost: the copy keeps the count, and a NOT NULL id refuses a malformed one.
 *
 * The retention triggers of decision 0021 are made again on the new table; the DELETE trigger now
 * compares the id with the first bytes of the cutoff instant (bytes compare as the instants do).
 * Dropping the old table is not a DELETE, so its triggers do not fire.
 *
 * On PostgreSQL, `keygate_user_agent_id(text)` returns the id of a user agent's row, adding the
 * row when it is new, so that a statement that inserts an audit row (the refresh's one-statement
 * rotation) can refer to its user agent in the same round trip and transaction.
 */
export class LeanAuditEvents1797000000100 implements MigrationInterface {
  name = 'LeanAuditEvents1797000000100';

  async up(queryRunner: QueryRunner): Promise<void> {
    const postgres = queryRunner.connection.options.type === 'postgres';
    const [{ count: before }] = (await queryRunner.query(
      'SELECT count(*) AS "count" FROM "auth_events"',
    )) as { count: string | number }[];
    await queryRunner.createTable(
      new Table({
        name: 'user_agents',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'userAgent', type: 'varchar', length: '256' },
        ],
        indices: [
          { name: 'IDX_user_agents_userAgent', columnNames: ['userAgent'], isUnique: true },
        ],
      }),
    );
    await queryRunner.query(
      'INSERT INTO "user_agents" ("userAgent") SELECT DISTINCT "userAgent" FROM "auth_events" ' +
        'WHERE "userAgent" IS NOT NULL',
    );
    await queryRunner.query('ALTER TABLE "auth_events" RENAME TO "auth_events_previous"');
    if (postgres) {
      const primaryKey = queryRunner.connection.namingStrategy.primaryKeyName('auth_events', [
        'id',
      ]);
      await queryRunner.query(
        `ALTER TABLE "auth_events_previous" RENAME CONSTRAINT "${primaryKey}" TO "PK_auth_events_previous"`,
      );
    }
    await queryRunner.createTable(
      new Table({
        name: 'auth_events',
        withoutRowid: !postgres,
        columns: [
          { name: 'id', type: postgres ? 'bytea' : 'blob', isPrimary: true },
          { name: 'type', type: 'varchar', length: '40' },
          { name: 'userId', type: 'varchar', length: '36', isNullable: true },
          { name: 'email', type: 'varchar', length: '254', isNullable: true },
          { name: 'ip', type: 'varchar', length: '64' },
          { name: 'userAgentId', type: 'integer', isNullable: true },
          { name: 'requestId', type: 'varchar', length: '128' },
          { name: 'details', type: 'text' },
        ],
        indices: [{ name: 'IDX_auth_events_userId_id', columnNames: ['userId', 'id'] }],
      }),
    );
    const idBytes = postgres
      ? `decode(replace(e."id", '-', ''), 'hex')`
      : `unhex(replace(e."id", '-', ''))`;
    await queryRunner.query(
      'INSERT INTO "auth_events" ("id", "type", "userId", "email", "ip", "userAgentId", ' +
        '"requestId", "details") ' +
        `SELECT ${idBytes}, e."type", e."userId", e."email", e."ip", a."id", e."requestId", ` +
        'e."details" FROM "auth_events_previous" e ' +
        'LEFT JOIN "user_agents" a ON a."userAgent" = e."userAgent"',
    );
    const [{ count: after }] = (await queryRunner.query(
      'SELECT count(*) AS "count" FROM "auth_events"',
    )) as { count: string | number }[];
    if (Number(after) !== Number(before)) {
      throw new Error(`auth_events: copied ${after} of ${before} rows`);
    }
    await queryRunner.query('DROP TABLE "auth_events_previous"');
    if (postgres) {
      await createPostgresObjects(queryRunner);
    } else {
      await createSqliteTriggers(queryRunner);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const postgres = queryRunner.connection.options.type === 'postgres';
    await queryRunner.query('ALTER TABLE "auth_events" RENAME TO "auth_events_lean"');
    if (postgres) {
      const primaryKey = queryRunner.connection.namingStrategy.primaryKeyName('auth_events', [
        'id',
      ]);
      await queryRunner.query(
        `ALTER TABLE "auth_events_lean" RENAME CONSTRAINT "${primaryKey}" TO "PK_auth_events_lean"`,
      );
      await queryRunner.query('DROP INDEX "IDX_auth_events_userId_id"');
    } else {
      await queryRunner.query('DROP INDEX "IDX_auth_events_userId_id"');
    }
    await queryRunner.createTable(
      new Table({
        name: 'auth_events',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'occurredAt', type: timestampType(queryRunner) },
          { name: 'type', type: 'varchar', length: '40' },
          { name: 'userId', type: 'varchar', length: '36', isNullable: true },
          { name: 'email', type: 'varchar', length: '254', isNullable: true },
          { name: 'ip', type: 'varchar', length: '64' },
          { name: 'userAgent', type: 'varchar', length: '256', isNullable: true },
          { name: 'requestId', type: 'varchar', length: '128' },
          { name: 'details', type: 'text' },
        ],
        indices: [
          { name: 'IDX_auth_events_userId_occurredAt', columnNames: ['userId', 'occurredAt'] },
          { name: 'IDX_auth_events_occurredAt', columnNames: ['occurredAt'] },
        ],
      }),
    );
    const hex = postgres ? `encode(e."id", 'hex')` : `lower(hex(e."id"))`;
    const uuid =
      `substr(${hex}, 1, 8) || '-' || substr(${hex}, 9, 4) || '-' || substr(${hex}, 13, 4) || ` +
      `'-' || substr(${hex}, 17, 4) || '-' || substr(${hex}, 21, 12)`;
    const occurredAt = postgres
      ? `to_timestamp(('x' || substr(${hex}, 1, 12))::bit(48)::bigint / 1000.0)`
      : `strftime('%Y-%m-%d %H:%M:%f', (${sqliteMilliseconds(hex)}) / 1000.0, 'unixepoch')`;
    await queryRunner.query(
      'INSERT INTO "auth_events" SELECT ' +
        `${uuid}, ${occurredAt}, e."type", e."userId", e."email", e."ip", a."userAgent", ` +
        'e."requestId", e."details" ' +
        'FROM "auth_events_lean" e LEFT JOIN "user_agents" a ON a."id" = e."userAgentId"',
    );
    await queryRunner.query('DROP TABLE "auth_events_lean"');
    await queryRunner.dropTable('user_agents');
    if (postgres) {
      await queryRunner.query('DROP FUNCTION keygate_user_agent_id(varchar)');
      await queryRunner.query(
        `CREATE OR REPLACE FUNCTION auth_events_delete_outside_window() RETURNS trigger ` +
          `LANGUAGE plpgsql SET search_path FROM CURRENT AS $$ ` +
          `BEGIN ` +
          `IF NOT COALESCE(OLD."occurredAt" < now() - make_interval(days => ` +
          `(SELECT "retentionDays" FROM "audit_retention" WHERE "id" = 1)), false) THEN ` +
          `RAISE EXCEPTION '${AUTH_EVENTS_APPEND_ONLY_MESSAGE}'; END IF; ` +
          `RETURN OLD; END $$`,
      );
      await createPostgresTriggers(queryRunner);
    } else {
      for (const trigger of ['update', 'delete']) {
        await queryRunner.query(`DROP TRIGGER IF EXISTS "TRG_auth_events_no_${trigger}"`);
      }
      await queryRunner.query(
        `CREATE TRIGGER "TRG_auth_events_no_update" BEFORE UPDATE ON "auth_events" ` +
          `BEGIN SELECT RAISE(ABORT, '${AUTH_EVENTS_APPEND_ONLY_MESSAGE}'); END`,
      );
      await queryRunner.query(
        `CREATE TRIGGER "TRG_auth_events_no_delete" BEFORE DELETE ON "auth_events" ` +
          `WHEN NOT COALESCE(OLD."occurredAt" < (SELECT strftime('%Y-%m-%d %H:%M:%f', 'now', ` +
          `'-' || "retentionDays" || ' days') FROM "audit_retention" WHERE "id" = 1), 0) ` +
          `BEGIN SELECT RAISE(ABORT, '${AUTH_EVENTS_APPEND_ONLY_MESSAGE}'); END`,
      );
    }
  }
}

/**
 * SQLite: the 48-bit millisecond count that `hex` (an id's lower-case hexadecimal) starts with, as
 * an integer; SQLite has no conversion from hexadecimal, so it adds the first 12 digits' values.
 */
function sqliteMilliseconds(hex: string): string {
  return Array.from(
    { length: 12 },
    (_, i) => `(instr('0123456789abcdef', substr(${hex}, ${i + 1}, 1)) - 1) * ${16 ** (11 - i)}`,
  ).join(' + ');
}

async function createSqliteTriggers(queryRunner: QueryRunner): Promise<void> {
  await queryRunner.query(
    `CREATE TRIGGER "TRG_auth_events_no_update" BEFORE UPDATE ON "auth_events" ` +
      `BEGIN SELECT RAISE(ABORT, '${AUTH_EVENTS_APPEND_ONLY_MESSAGE}'); END`,
  );
  // The cutoff is the database's clock minus the window, as the id's first six bytes: the
  // milliseconds since 1970, big-endian. A 16-byte id is smaller than those six bytes exactly
  // when its instant is earlier (an equal prefix makes the longer one larger).
  await queryRunner.query(
    `CREATE TRIGGER "TRG_auth_events_no_delete" BEFORE DELETE ON "auth_events" ` +
      `WHEN NOT COALESCE(OLD."id" < (SELECT unhex(printf('%012x', CAST(unixepoch('now', ` +
      `'-' || "retentionDays" || ' days', 'subsec') * 1000 AS INTEGER))) ` +
      `FROM "audit_retention" WHERE "id" = 1), 0) ` +
      `BEGIN SELECT RAISE(ABORT, '${AUTH_EVENTS_APPEND_ONLY_MESSAGE}'); END`,
  );
}

async function createPostgresObjects(queryRunner: QueryRunner): Promise<void> {
  // now() is the start of the transaction: one cutoff for every row of a statement.
  await queryRunner.query(
    `CREATE OR REPLACE FUNCTION auth_events_delete_outside_window() RETURNS trigger ` +
      `LANGUAGE plpgsql SET search_path FROM CURRENT AS $$ ` +
      `BEGIN ` +
      `IF NOT COALESCE(OLD."id" < decode(lpad(to_hex(floor(extract(epoch FROM now() - ` +
      `make_interval(days => (SELECT "retentionDays" FROM "audit_retention" WHERE "id" = 1))) ` +
      `* 1000)::bigint), 12, '0'), 'hex'), false) THEN ` +
      `RAISE EXCEPTION '${AUTH_EVENTS_APPEND_ONLY_MESSAGE}'; END IF; ` +
      `RETURN OLD; END $$`,
  );
  await createPostgresTriggers(queryRunner);
  // Looks first, so that a known user agent (nearly every call) writes nothing and takes no
  // sequence value; a new one is added, and a concurrent insert of the same text is waited for
  // by the unique index and then read.
  await queryRunner.query(
    `CREATE FUNCTION keygate_user_agent_id(agent varchar) RETURNS integer LANGUAGE plpgsql ` +
      `SET search_path FROM CURRENT AS $$ ` +
      `DECLARE found integer; ` +
      `BEGIN ` +
      `IF agent IS NULL THEN RETURN NULL; END IF; ` +
      `SELECT "id" INTO found FROM "user_agents" WHERE "userAgent" = agent; ` +
      `IF found IS NULL THEN ` +
      `INSERT INTO "user_agents" ("userAgent") VALUES (agent) ` +
      `ON CONFLICT ("userAgent") DO NOTHING RETURNING "id" INTO found; ` +
      `END IF; ` +
      `IF found IS NULL THEN ` +
      `SELECT "id" INTO found FROM "user_agents" WHERE "userAgent" = agent; ` +
      `END IF; ` +
      `RETURN found; END $$`,
  );
}

async function createPostgresTriggers(queryRunner: QueryRunner): Promise<void> {
  await queryRunner.query(
    'CREATE TRIGGER "TRG_auth_events_no_update" BEFORE UPDATE ON "auth_events" ' +
      'FOR EACH ROW EXECUTE FUNCTION auth_events_append_only()',
  );
  await queryRunner.query(
    'CREATE TRIGGER "TRG_auth_events_retention" BEFORE DELETE ON "auth_events" ' +
      'FOR EACH ROW EXECUTE FUNCTION auth_events_delete_outside_window()',
  );
  await queryRunner.query(
    'CREATE TRIGGER "TRG_auth_events_no_truncate" BEFORE TRUNCATE ON "auth_events" ' +
      'FOR EACH STATEMENT EXECUTE FUNCTION auth_events_append_only()',
  );
}
