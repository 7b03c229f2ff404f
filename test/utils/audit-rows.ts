import { fromSqliteDatetime } from '../../src/database/sqlite-datetime.js';
import { onPostgres, type TestDatabase } from './test-database.js';

/** An `auth_events` row read with plain SQL, outside the service, with its details parsed. */
export interface AuditRow {
  readonly id: string;
  readonly occurredAt: Date;
  readonly type: string;
  readonly userId: string | null;
  readonly email: string | null;
  readonly ip: string;
  readonly userAgent: string | null;
  readonly requestId: string;
  readonly details: Record<string, unknown>;
}

interface RawAuditRow extends Omit<AuditRow, 'occurredAt' | 'details'> {
  readonly occurredAt: string | Date;
  readonly details: string;
}

const COLUMNS =
  '"id", "occurredAt", "type", "userId", "email", "ip", "userAgent", "requestId", "details"';

/** Every audit row, oldest first (ties in the order they were told), optionally of one user. */
export async function auditRows(database: TestDatabase, userId?: string): Promise<AuditRow[]> {
  const where = userId === undefined ? '' : 'WHERE "userId" = $1';
  const rows = await database.query<RawAuditRow>(
    `SELECT ${COLUMNS} FROM "auth_events" ${where} ORDER BY "occurredAt", "id"`,
    userId === undefined ? [] : [userId],
  );
  return rows.map((row) => ({
    ...row,
    occurredAt:
      typeof row.occurredAt === 'string' ? fromSqliteDatetime(row.occurredAt) : row.occurredAt,
    details: JSON.parse(row.details) as Record<string, unknown>,
  }));
}

/** The whole table as text, for "this secret is never stored" checks. */
export async function auditTableText(database: TestDatabase): Promise<string> {
  return JSON.stringify(await database.query(`SELECT ${COLUMNS} FROM "auth_events"`));
}

/**
 * Makes the database refuse every insert into auth_events, as a full disk would, with a trigger
 * created outside the service. Returns the undo.
 */
export async function refuseAuditInserts(database: TestDatabase): Promise<() => Promise<void>> {
  if (onPostgres) {
    await database.query(
      `CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected fault'; END $$`,
    );
    await database.query(
      'CREATE TRIGGER refuse_audit BEFORE INSERT ON auth_events FOR EACH ROW EXECUTE FUNCTION refuse_audit()',
    );
    return async () => {
      await database.query('DROP TRIGGER refuse_audit ON auth_events');
      await database.query('DROP FUNCTION refuse_audit()');
    };
  }
  await database.query(
    `CREATE TRIGGER refuse_audit BEFORE INSERT ON auth_events BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
  );
  return async () => {
    await database.query('DROP TRIGGER refuse_audit');
  };
}
