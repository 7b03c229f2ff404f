import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { AUTH_EVENTS_APPEND_ONLY_MESSAGE } from './1735689600100-CreateAuthEvents.js';

/** Audit__RetentionDays' default, stored until the service first starts with its own value. */
const DEFAULT_RETENTION_DAYS = 365;

/**
 * The audit trail's retention window, known to the database: the one row of `audit_retention`
 * holds the number of days, written by the service at start-up and by every purge. UPDATE stays
 * refused on `auth_events`; DELETE is refused for a row that is not older than the window by the
 * database's own clock, so a stray `DELETE FROM auth_events` of recent rows fails whole, while the
 * purge can remove rows past the window. Without the row (or with a NULL), every DELETE is refused.
 * Existing rows are untouched: only triggers change.
 */
export class AuditRetentionWindow1796500000000 implements MigrationInterface {
  name = 'AuditRetentionWindow1796500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'audit_retention',
        columns: [
          { name: 'id', type: 'integer', isPrimary: true },
          { name: 'retentionDays', type: 'integer' },
        ],
        checks: [
          { name: 'CHK_audit_retention_single_row', expression: '"id" = 1' },
          { name: 'CHK_audit_retention_days', expression: '"retentionDays" >= 1' },
        ],
      }),
    );
    await queryRunner.query(
      `INSERT INTO "audit_retention" ("id", "retentionDays") VALUES (1, ${DEFAULT_RETENTION_DAYS})`,
    );
    if (queryRunner.connection.options.type === 'postgres') {
      // now() is the start of the transaction: one cutoff for every row of a statement. The
      // search path is pinned to this schema's, so a session with another one (an operator's
      // psql) still reads this window.
      await queryRunner.query(
        `CREATE FUNCTION auth_events_delete_outside_window() RETURNS trigger LANGUAGE plpgsql ` +
          `SET search_path FROM CURRENT AS $$ ` +
          `BEGIN ` +
          `IF NOT COALESCE(OLD."occurredAt" < now() - make_interval(days => ` +
          `(SELECT "retentionDays" FROM "audit_retention" WHERE "id" = 1)), false) THEN ` +
          `RAISE EXCEPTION '${AUTH_EVENTS_APPEND_ONLY_MESSAGE}'; END IF; ` +
          `RETURN OLD; END $$`,
      );
      await queryRunner.query('DROP TRIGGER "TRG_auth_events_append_only" ON "auth_events"');
      await queryRunner.query(
        'CREATE TRIGGER "TRG_auth_events_no_update" BEFORE UPDATE ON "auth_events" ' +
          'FOR EACH ROW EXECUTE FUNCTION auth_events_append_only()',
      );
      await queryRunner.query(
        'CREATE TRIGGER "TRG_auth_events_retention" BEFORE DELETE ON "auth_events" ' +
          'FOR EACH ROW EXECUTE FUNCTION auth_events_delete_outside_window()',
      );
      return;
    }
    // Stored instants are `YYYY-MM-DD HH:MM:SS.SSS` text in UTC (toSqliteDatetime), which
    // strftime's %f format matches, so text order is time order.
    await queryRunner.query('DROP TRIGGER "TRG_auth_events_no_delete"');
    await queryRunner.query(
      `CREATE TRIGGER "TRG_auth_events_no_delete" BEFORE DELETE ON "auth_events" ` +
        `WHEN NOT COALESCE(OLD."occurredAt" < (SELECT strftime('%Y-%m-%d %H:%M:%f', 'now', ` +
        `'-' || "retentionDays" || ' days') FROM "audit_retention" WHERE "id" = 1), 0) ` +
        `BEGIN SELECT RAISE(ABORT, '${AUTH_EVENTS_APPEND_ONLY_MESSAGE}'); END`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.options.type === 'postgres') {
      await queryRunner.query('DROP TRIGGER "TRG_auth_events_retention" ON "auth_events"');
      await queryRunner.query('DROP TRIGGER "TRG_auth_events_no_update" ON "auth_events"');
      await queryRunner.query('DROP FUNCTION auth_events_delete_outside_window()');
      await queryRunner.query(
        'CREATE TRIGGER "TRG_auth_events_append_only" BEFORE UPDATE OR DELETE ON "auth_events" ' +
          'FOR EACH ROW EXECUTE FUNCTION auth_events_append_only()',
      );
    } else {
      await queryRunner.query('DROP TRIGGER "TRG_auth_events_no_delete"');
      await queryRunner.query(
        `CREATE TRIGGER "TRG_auth_events_no_delete" BEFORE DELETE ON "auth_events" ` +
          `BEGIN SELECT RAISE(ABORT, '${AUTH_EVENTS_APPEND_ONLY_MESSAGE}'); END`,
      );
    }
    await queryRunner.dropTable('audit_retention');
  }
}
