import { DataSource } from 'typeorm';
import { AuditRetentionService } from '../src/audit/audit-retention.service.js';
import { AuditTrail } from '../src/audit/audit-trail.service.js';
import { parseConnectionString } from '../src/config/settings/connection-string.js';
import { ENTITIES } from '../src/database/data-source.js';
import { dataSourceOptions } from '../src/database/data-source-options.js';
import { MIGRATIONS } from '../src/database/migrations/index.js';
import { fromSqliteDatetime, toSqliteDatetime } from '../src/database/sqlite-datetime.js';
import { LeanAuditEvents1797000000100 } from '../src/database/migrations/1797000000100-LeanAuditEvents.js';
import { AuthEvents } from '../src/events/auth-events.js';
import { buildDatabaseConfig } from './factories/database-config.factory.js';
import { auditRows, type AuditRow } from './utils/audit-rows.js';
import { createTestApp, type TestApp } from './utils/create-test-app.js';
import { FakeClock } from './utils/fake-clock.js';
import { migrateAsPreviousRelease } from './utils/previous-release.js';
import { createTestDatabase, onPostgres, type TestDatabase } from './utils/test-database.js';

// A trail written by the previous release keeps every row, field for field, after the upgrade
// to the lean layout of decision 0028 (ids as bytes, the instant in the id, user agents by
// reference): its schema is made by that release's migrations, its rows are written in that
// release's layout with SQL, and the current service, which migrates at start-up, is asked what
// an operator would ask (the admin view, the export), while the database keeps refusing early
// deletes and every update.

const DAY_MS = 24 * 60 * 60 * 1000;
const APPEND_ONLY = 'auth_events is append-only';
const USER_ID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0';
const CURL = 'curl/8.5.0';

// The database's retention trigger reads the machine's clock, so the rows are dated from it.
const NOW = new Date(Math.floor(Date.now() / 1000) * 1000);
const ago = (ms: number): Date => new Date(NOW.getTime() - ms);

/** A UUIDv7 made at `at`, as the previous release made them; `n` tells apart ties. */
const uuidAt = (at: Date, n: number): string => {
  const hex = `${at.getTime().toString(16).padStart(12, '0')}7abc9def${String(n).padStart(12, '0')}`;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

const row = (
  at: Date,
  n: number,
  fields: Partial<Omit<AuditRow, 'id' | 'occurredAt'>> = {},
): AuditRow => ({
  id: uuidAt(at, n),
  occurredAt: at,
  type: 'token_refreshed',
  userId: USER_ID,
  email: null,
  ip: '203.0.113.7',
  userAgent: FIREFOX,
  requestId: `req-${n}`,
  details: { familyId: 'f', tokenId: `t${n}`, replacedByTokenId: `t${n + 1}` },
  ...fields,
});

/** Oldest first: one row past the default window, two sharing a millisecond, every kind of agent. */
const OLD_ROWS: readonly AuditRow[] = [
  row(ago(400 * DAY_MS), 1),
  row(ago(3 * DAY_MS), 2, { userAgent: CURL, ip: '198.51.100.20' }),
  row(ago(2 * DAY_MS), 3, { userAgent: null }),
  row(ago(2 * DAY_MS), 4),
  row(ago(DAY_MS), 5, {
    type: 'login_failed',
    userId: null,
    email: 'mallory@example.com',
    details: { reason: 'unknown_email' },
  }),
  row(ago(60_000), 6, { userAgent: CURL }),
];

describe('upgrade from the previous release: the audit trail', () => {
  let database: TestDatabase;
  let t: TestApp;

  const timestamp = (date: Date): string =>
    onPostgres ? date.toISOString() : toSqliteDatetime(date);

  async function refusalOf(sql: string): Promise<string> {
    try {
      await database.query(sql);
      return 'accepted';
    } catch (error: unknown) {
      return String((error as { message?: unknown }).message);
    }
  }

  const idSql = (id: string): string => {
    const hex = id.replaceAll('-', '');
    return onPostgres ? `decode('${hex}', 'hex')` : `x'${hex}'`;
  };

  beforeEach(async () => {
    database = await createTestDatabase();
    await migrateAsPreviousRelease(database.connectionString);
    // Inserted newest first, so that the copy's order cannot come from the insertion order.
    for (const event of [...OLD_ROWS].reverse()) {
      await database.query(
        `INSERT INTO auth_events ("id", "occurredAt", "type", "userId", "email", "ip",
           "userAgent", "requestId", "details")
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [
          event.id,
          timestamp(event.occurredAt),
          event.type,
          event.userId,
          event.email,
          event.ip,
          event.userAgent,
          event.requestId,
          JSON.stringify(event.details),
        ],
      );
    }
    // The current service migrates the database at start-up.
    t = await createTestApp({ database, clock: new FakeClock(NOW) });
  });

  afterEach(async () => {
    await t.close();
    await database.drop();
  });

  it('should keep every row, field for field, each user agent stored once', async () => {
    expect(await auditRows(database)).toEqual(OLD_ROWS);
    const agents = await database.query<{ userAgent: string }>(
      'SELECT "userAgent" FROM "user_agents"',
    );
    expect(agents.map((agent) => agent.userAgent).sort()).toEqual([CURL, FIREFOX].sort());
  });

  it('should show the old rows in the admin view and the export as before', async () => {
    const entries = OLD_ROWS.filter((event) => event.userId === USER_ID);

    expect(await t.app.get(AuditTrail).latestForUser(USER_ID, 3)).toEqual(
      entries.slice(-3).reverse(),
    );
    const exported = [];
    for await (const entry of t.app.get(AuditRetentionService).entriesBefore(ago(DAY_MS - 1))) {
      exported.push(entry);
    }
    expect(exported).toEqual(OLD_ROWS.slice(0, 5));
  });

  it('should keep refusing updates and early deletes, and let the purge remove old rows', async () => {
    const recent = OLD_ROWS[1].id;

    expect(await refusalOf(`DELETE FROM auth_events WHERE "id" = ${idSql(recent)}`)).toBe(
      APPEND_ONLY,
    );
    expect(await refusalOf('DELETE FROM auth_events')).toBe(APPEND_ONLY);
    expect(await refusalOf(`UPDATE auth_events SET "type" = 'tampered'`)).toBe(APPEND_ONLY);
    expect(
      await refusalOf(
        `UPDATE auth_events SET "ip" = '0.0.0.0' WHERE "id" = ${idSql(OLD_ROWS[0].id)}`,
      ),
    ).toBe(APPEND_ONLY);
    if (onPostgres) {
      expect(await refusalOf('TRUNCATE auth_events')).toBe(APPEND_ONLY);
    }
    expect(await auditRows(database)).toEqual(OLD_ROWS);

    const purged = await t.app.get(AuditRetentionService).purge();

    expect(purged.deletedCount).toBe(1);
    expect((await auditRows(database)).slice(0, 5)).toEqual(OLD_ROWS.slice(1));
  });

  it('should refer new rows to the user agents the migration moved', async () => {
    await t.app.get(AuthEvents).recordAlone(
      {
        type: 'login_failed',
        userId: USER_ID,
        email: 'alice@example.com',
        reason: 'bad_password',
      },
      { ip: '203.0.113.7', userAgent: FIREFOX, requestId: 'req-after' },
    );

    const rows = await auditRows(database);
    expect(rows).toHaveLength(OLD_ROWS.length + 1);
    expect(rows[rows.length - 1]).toEqual({
      id: expect.any(String) as unknown,
      occurredAt: NOW,
      type: 'login_failed',
      userId: USER_ID,
      email: null,
      ip: '203.0.113.7',
      userAgent: FIREFOX,
      requestId: 'req-after',
      details: { reason: 'bad_password' },
    });
    expect(await database.query('SELECT count(*) AS "count" FROM "user_agents"')).toEqual([
      { count: onPostgres ? '2' : 2 },
    ]);
  });

  it('should give every row back in the previous layout when the migration is reverted', async () => {
    const dataSource = await new DataSource({
      ...dataSourceOptions(buildDatabaseConfig(parseConnectionString(database.connectionString)), {
        entities: ENTITIES,
      }),
      migrations: [...MIGRATIONS],
    }).initialize();
    try {
      const undone = MIGRATIONS.length - MIGRATIONS.indexOf(LeanAuditEvents1797000000100);
      for (let i = 0; i < undone; i++) {
        await dataSource.undoLastMigration({ transaction: 'all' });
      }
    } finally {
      await dataSource.destroy();
    }

    const rows = await database.query<
      Omit<AuditRow, 'occurredAt' | 'details'> & {
        occurredAt: string | Date;
        details: string;
      }
    >(
      'SELECT "id", "occurredAt", "type", "userId", "email", "ip", "userAgent", "requestId", ' +
        '"details" FROM auth_events ORDER BY "occurredAt", "id"',
    );
    expect(
      rows.map((stored) => ({
        ...stored,
        occurredAt:
          typeof stored.occurredAt === 'string'
            ? fromSqliteDatetime(stored.occurredAt)
            : stored.occurredAt,
        details: JSON.parse(stored.details) as unknown,
      })),
    ).toEqual(OLD_ROWS);
    expect(await refusalOf(`DELETE FROM auth_events WHERE "id" = '${OLD_ROWS[1].id}'`)).toBe(
      APPEND_ONLY,
    );
    expect(await refusalOf(`UPDATE auth_events SET "type" = 'tampered'`)).toBe(APPEND_ONLY);
    expect(await refusalOf(`DELETE FROM auth_events WHERE "id" = '${OLD_ROWS[0].id}'`)).toBe(
      'accepted',
    );
  });
});
