import { jest } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { parseConnectionString } from '../../src/config/settings/connection-string.js';
import { dataSourceOptions } from '../../src/database/data-source-options.js';
import { AuditRetentionWindow1796500000000 } from '../../src/database/migrations/1796500000000-AuditRetentionWindow.js';
import { MIGRATIONS } from '../../src/database/migrations/index.js';
import { eventIdFloor } from '../../src/audit/event-id.js';
import { toSqliteDatetime } from '../../src/database/sqlite-datetime.js';
import { auditRows, type AuditRow } from '../utils/audit-rows.js';
import { runCliOn, type CliRun } from '../utils/cli-process.js';
import { useTestApp } from '../utils/create-test-app.js';
import { FakeClock } from '../utils/fake-clock.js';
import { createTestDatabase, onPostgres, type TestDatabase } from '../utils/test-database.js';
import { buildDatabaseConfig } from '../factories/database-config.factory.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const APPEND_ONLY = 'auth_events is append-only';
const ISO = '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z';

/** An event id (UUID text) as an SQL literal of its stored bytes (decision 0028). */
const idSql = (id: string): string => {
  const hex = id.replaceAll('-', '');
  return onPostgres ? `decode('${hex}', 'hex')` : `x'${hex}'`;
};

/**
 * Inserts one `login_failed` row per instant, outside the service, in the stored layout: ids
 * (UUIDv7, the instant in their first 48 bits) that sort in the order given; returns the ids.
 */
async function insertEvents(database: TestDatabase, instants: readonly Date[]): Promise<string[]> {
  const ids: string[] = [];
  for (const [n, instant] of instants.entries()) {
    const hex = `${instant.getTime().toString(16).padStart(12, '0')}70008000${String(n).padStart(12, '0')}`;
    const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    await database.query(
      `INSERT INTO auth_events ("id", "type", "userId", "email", "ip", "userAgentId", "requestId", "details")
       VALUES (${idSql(id)}, 'login_failed', NULL, $1, '192.0.2.1', NULL, $2, $3)`,
      [`user${n}@example.com`, `req-${n}`, '{"reason":"unknown_email"}'],
    );
    ids.push(id);
  }
  return ids;
}

/** insertEvents in the layout before decision 0028: text ids, an `occurredAt` column. */
async function insertLegacyEvents(
  database: TestDatabase,
  instants: readonly Date[],
): Promise<string[]> {
  const ids: string[] = [];
  for (const [n, instant] of instants.entries()) {
    const id = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    await database.query(
      `INSERT INTO auth_events ("id", "occurredAt", "type", "userId", "email", "ip", "userAgent", "requestId", "details")
       VALUES ($1, $2, 'login_failed', NULL, $3, '192.0.2.1', NULL, $4, $5)`,
      [
        id,
        onPostgres ? instant.toISOString() : toSqliteDatetime(instant),
        `user${n}@example.com`,
        `req-${n}`,
        '{"reason":"unknown_email"}',
      ],
    );
    ids.push(id);
  }
  return ids;
}

/** The ids of a trail in the layout before decision 0028, oldest first. */
async function legacyIds(database: TestDatabase): Promise<string[]> {
  const rows = await database.query<{ id: string }>(
    'SELECT "id" FROM auth_events ORDER BY "occurredAt", "id"',
  );
  return rows.map((row) => row.id);
}

/** The driver's error message (the SQLite one may come from another realm than Jest's Error). */
async function refusalOf(database: TestDatabase, sql: string, parameters: unknown[] = []) {
  try {
    await database.query(sql, parameters);
    return 'accepted';
  } catch (error: unknown) {
    return String((error as { message?: unknown }).message);
  }
}

/** What `audit:export` writes for a row inserted by insertEvents. */
function exportLine(id: string, instant: Date, n: number): string {
  return JSON.stringify({
    id,
    occurredAt: instant.toISOString(),
    type: 'login_failed',
    userId: null,
    email: `user${n}@example.com`,
    ip: '192.0.2.1',
    userAgent: null,
    requestId: `req-${n}`,
    details: { reason: 'unknown_email' },
  });
}

// Tests start real CLI processes, which boot Nest and open the database.
jest.setTimeout(60_000);

describe('audit retention', () => {
  // The database's triggers and the CLI read the machine's clock; the app starts there too.
  const t = useTestApp(() => ({ clock: new FakeClock(new Date()) }));
  let cwd: string;
  let now: number;

  const cli = (args: readonly string[], env: Record<string, string> = {}): Promise<CliRun> =>
    runCliOn(t.database, args, cwd, env);
  const daysAgo = (days: number): Date => new Date(now - days * DAY_MS);
  const remainingIds = async (): Promise<string[]> =>
    (await auditRows(t.database)).filter((row) => row.ip !== 'cli').map((row) => row.id);
  const cliRows = async (): Promise<AuditRow[]> =>
    (await auditRows(t.database)).filter((row) => row.ip === 'cli');
  const storedWindow = (): Promise<unknown[]> =>
    t.database.query('SELECT "id", "retentionDays" FROM audit_retention');

  beforeEach(() => {
    cwd = mkdtempSync(join(tmpdir(), 'keygate-audit-'));
    now = Date.now();
  });

  afterEach(() => {
    rmSync(cwd, { recursive: true, force: true });
  });

  describe('in the database', () => {
    it('should store the configured window when the service starts', async () => {
      expect(await storedWindow()).toEqual([{ id: 1, retentionDays: 365 }]);
    });

    it('should refuse a stray DELETE of recent rows, whole, and any UPDATE', async () => {
      const ids = await insertEvents(t.database, [daysAgo(400), daysAgo(364), daysAgo(0)]);

      const refusals = [];
      for (const sql of [
        'DELETE FROM auth_events',
        `DELETE FROM auth_events WHERE "id" = ${idSql(ids[2])}`,
        `DELETE FROM auth_events WHERE "id" = ${idSql(ids[1])}`,
        `UPDATE auth_events SET "details" = '{}'`,
        `UPDATE auth_events SET "type" = 'tampered' WHERE "id" = ${idSql(ids[0])}`,
      ]) {
        refusals.push(await refusalOf(t.database, sql));
      }

      expect(refusals).toEqual(Array(5).fill(APPEND_ONLY));
      expect(await remainingIds()).toEqual(ids);
    });

    it('should let a row older than the window be deleted', async () => {
      const ids = await insertEvents(t.database, [daysAgo(400), daysAgo(366), daysAgo(1)]);

      expect(
        await refusalOf(t.database, 'DELETE FROM auth_events WHERE "id" < $1', [
          eventIdFloor(daysAgo(365)),
        ]),
      ).toBe('accepted');

      expect(await remainingIds()).toEqual([ids[2]]);
    });
  });

  describe('audit:purge', () => {
    it('should delete exactly the rows older than the window and record it', async () => {
      const ids = await insertEvents(t.database, [
        daysAgo(800),
        daysAgo(400),
        daysAgo(366),
        daysAgo(364),
        daysAgo(1),
      ]);

      const result = await cli(['audit:purge']);

      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).toMatch(
        new RegExp(
          `^Deleted 3 audit event\\(s\\) older than (${ISO}) \\(Audit__RetentionDays=365\\)\\.\\n$`,
        ),
      );
      const cutoff = new Date(/older than (\S+)/.exec(result.stdout)?.[1] ?? '');
      expect(Math.abs(cutoff.getTime() - daysAgo(365).getTime())).toBeLessThan(60_000);
      expect(await remainingIds()).toEqual(ids.slice(3));
      expect((await cliRows()).map((row) => [row.type, row.userId, row.details])).toEqual([
        [
          'admin_audit_purged',
          null,
          { cutoff: cutoff.toISOString(), retentionDays: 365, deletedCount: 3 },
        ],
      ]);
    });

    it('should apply its configured window to the database first', async () => {
      const ids = await insertEvents(t.database, [daysAgo(40), daysAgo(20)]);

      const result = await cli(['audit:purge'], {
        Audit__RetentionDays: '30',
        Audit__PurgeBatchSize: '1',
      });

      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^Deleted 1 audit event\(s\) older than /);
      expect(await storedWindow()).toEqual([{ id: 1, retentionDays: 30 }]);
      expect(await remainingIds()).toEqual([ids[1]]);
      expect(
        await refusalOf(t.database, `DELETE FROM auth_events WHERE "id" = ${idSql(ids[1])}`),
      ).toBe(APPEND_ONLY);
    });

    it('should exit 1 with the reason when the configuration is invalid, and delete nothing', async () => {
      const ids = await insertEvents(t.database, [daysAgo(400)]);

      const result = await cli(['audit:purge'], { Audit__RetentionDays: '0' });

      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(
        'keygate-cli: audit:purge failed: Invalid configuration: Audit__RetentionDays must not be less than 1 (got "0")\n',
      );
      expect(await remainingIds()).toEqual(ids);
    });
  });

  describe('audit:export', () => {
    it('should write exactly the rows before the date to a new file, oldest first, and record it', async () => {
      const instants = [daysAgo(30), daysAgo(20), daysAgo(20), daysAgo(10), daysAgo(5)];
      const ids = await insertEvents(t.database, instants);
      const before = new Date(daysAgo(10).getTime() + 1);
      const file = join(cwd, 'trail.jsonl');

      const result = await cli([
        'audit:export',
        '--before',
        before.toISOString(),
        '--output',
        file,
      ]);

      expect(result).toEqual({
        code: 0,
        stdout: `Exported 4 audit event(s) older than ${before.toISOString()} to ${file}.\n`,
        stderr: '',
      });
      expect(readFileSync(file, 'utf8')).toBe(
        [0, 1, 2, 3].map((n) => `${exportLine(ids[n], instants[n], n)}\n`).join(''),
      );
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect((await cliRows()).map((row) => [row.type, row.userId, row.details])).toEqual([
        ['admin_audit_exported', null, { before: before.toISOString(), rowCount: 4 }],
      ]);
      // Exporting leaves the trail as it was.
      expect(await remainingIds()).toEqual(ids);
    });

    it('should write only the lines to standard output without --output', async () => {
      const instants = [daysAgo(3), daysAgo(2)];
      const ids = await insertEvents(t.database, instants);

      const result = await cli(['audit:export', '--before', new Date(now).toISOString()]);

      expect(result).toEqual({
        code: 0,
        stdout: `${exportLine(ids[0], instants[0], 0)}\n${exportLine(ids[1], instants[1], 1)}\n`,
        stderr: '',
      });
    });

    it('should write nothing, and still succeed, when no row is that old', async () => {
      await insertEvents(t.database, [daysAgo(1)]);

      const result = await cli(['audit:export', '--before', '2000-01-01']);

      expect(result).toEqual({ code: 0, stdout: '', stderr: '' });
      expect((await cliRows()).map((row) => row.details)).toEqual([
        { before: '2000-01-01T00:00:00.000Z', rowCount: 0 },
      ]);
    });

    it('should exit 1 and leave an existing file alone', async () => {
      await insertEvents(t.database, [daysAgo(3)]);
      const file = join(cwd, 'earlier.jsonl');
      writeFileSync(file, 'an earlier export\n');

      const result = await cli(['audit:export', '--before', '2099-01-01', '--output', file]);

      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(
        `keygate-cli: audit:export failed: EEXIST: file already exists, open '${file}'\n`,
      );
      expect(readFileSync(file, 'utf8')).toBe('an earlier export\n');
      expect(await cliRows()).toEqual([]);
    });

    it.each([
      [
        ['audit:export'],
        'audit:export needs --before: audit:export --before <date> [--output <file>]',
      ],
      [
        ['audit:export', '--before', '2025-01-01T00:00:00'],
        '--before must be a date such as 2025-01-01 or an instant such as 2025-01-01T12:00:00Z, got "2025-01-01T00:00:00".',
      ],
      [
        ['audit:purge', '--before', '2025-01-01'],
        '--before applies only to audit:export, not to audit:purge.',
      ],
    ])('should exit 2 for %j and say why', async (args, message) => {
      const result = await cli(args);

      expect(result).toEqual({
        code: 2,
        stdout: '',
        stderr: `keygate-cli: ${message}\nRun with --help to see the commands.\n`,
      });
    });
  });
});

describe('audit retention with its own window', () => {
  const t = useTestApp(() => ({
    clock: new FakeClock(new Date()),
    environment: { Audit__RetentionDays: '30' },
  }));

  it('should tell the database the configured window at start-up', async () => {
    expect(await t.database.query('SELECT "retentionDays" FROM audit_retention')).toEqual([
      { retentionDays: 30 },
    ]);
    const now = Date.now();
    const ids = await insertEvents(t.database, [
      new Date(now - 31 * DAY_MS),
      new Date(now - 29 * DAY_MS),
    ]);

    expect(await refusalOf(t.database, 'DELETE FROM auth_events')).toBe(APPEND_ONLY);
    expect(
      await refusalOf(t.database, `DELETE FROM auth_events WHERE "id" = ${idSql(ids[0])}`),
    ).toBe('accepted');
  });
});

describe('the audit retention migration on an existing trail', () => {
  const NEW = MIGRATIONS.indexOf(AuditRetentionWindow1796500000000);
  let database: TestDatabase;
  let dataSource: DataSource;
  let ids: string[];
  const now = Date.now();

  const connect = (): Promise<DataSource> =>
    new DataSource({
      ...dataSourceOptions(buildDatabaseConfig(parseConnectionString(database.connectionString))),
      migrations: MIGRATIONS.slice(0, NEW + 1),
    }).initialize();

  beforeEach(async () => {
    database = await createTestDatabase();
    dataSource = await connect();
    await dataSource.runMigrations({ transaction: 'all' });
    await dataSource.undoLastMigration({ transaction: 'all' });
    ids = await insertLegacyEvents(database, [
      new Date(now - 400 * DAY_MS),
      new Date(now - DAY_MS),
    ]);
  });

  afterEach(async () => {
    await dataSource.destroy();
    await database.drop();
  });

  it('should keep every row, and let only rows past the default window of 365 days go', async () => {
    expect(await refusalOf(database, `DELETE FROM auth_events WHERE "id" = '${ids[0]}'`)).toBe(
      APPEND_ONLY,
    );

    await dataSource.runMigrations({ transaction: 'all' });

    expect(await legacyIds(database)).toEqual(ids);
    expect(await database.query('SELECT "retentionDays" FROM audit_retention')).toEqual([
      { retentionDays: 365 },
    ]);
    expect(await refusalOf(database, 'DELETE FROM auth_events')).toBe(APPEND_ONLY);
    expect(await refusalOf(database, `UPDATE auth_events SET "details" = '{}'`)).toBe(APPEND_ONLY);
    expect(await refusalOf(database, `DELETE FROM auth_events WHERE "id" = '${ids[0]}'`)).toBe(
      'accepted',
    );
  });

  it('should revert to refusing every DELETE, keeping every row', async () => {
    await dataSource.runMigrations({ transaction: 'all' });
    await dataSource.undoLastMigration({ transaction: 'all' });

    expect(await refusalOf(database, `DELETE FROM auth_events WHERE "id" = '${ids[0]}'`)).toBe(
      APPEND_ONLY,
    );
    expect(await legacyIds(database)).toEqual(ids);
    expect(await refusalOf(database, 'SELECT 1 FROM audit_retention')).toMatch(/audit_retention/);
  });
});
