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

interface RawAuditRow extends Omit<AuditRow, 'id' | 'occurredAt' | 'details'> {
  readonly hex: string;
  readonly details: string;
}

/**
 * The stored layout (decision 0028) read back as the fields an event has: the id's bytes as UUID
 * text, the instant from its first 48 bits, the user agent's text from `user_agents`.
 */
const SELECT =
  `SELECT ${onPostgres ? `encode(e."id", 'hex')` : 'lower(hex(e."id"))'} AS "hex", e."type", ` +
  'e."userId", e."email", e."ip", a."userAgent", e."requestId", e."details" ' +
  'FROM "auth_events" e LEFT JOIN "user_agents" a ON a."id" = e."userAgentId"';

/** Every audit row, oldest first (ties in the order they were told), optionally of one user. */
export async function auditRows(database: TestDatabase, userId?: string): Promise<AuditRow[]> {
  const where = userId === undefined ? '' : 'WHERE e."userId" = $1';
  const rows = await database.query<RawAuditRow>(
    `${SELECT} ${where} ORDER BY e."id"`,
    userId === undefined ? [] : [userId],
  );
  return rows.map(({ hex, ...row }) => ({
    id: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`,
    occurredAt: new Date(parseInt(hex.slice(0, 12), 16)),
    type: row.type,
    userId: row.userId,
    email: row.email,
    ip: row.ip,
    userAgent: row.userAgent,
    requestId: row.requestId,
    details: JSON.parse(row.details) as Record<string, unknown>,
  }));
}

/** The whole table as text, its user agents included, for "this secret is never stored" checks. */
export async function auditTableText(database: TestDatabase): Promise<string> {
  return JSON.stringify(await database.query(SELECT));
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
