import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { timestampType } from '../column-types.js';

/** Raised by the append-only triggers; tests and operators see this text. */
export const AUTH_EVENTS_APPEND_ONLY_MESSAGE = 'auth_events is append-only';

/**
 * The audit trail. No foreign key to `users`: a row must outlive anything that happens to the
 * account, and a cascading delete would be refused by the triggers anyway.
 *
 * Append-only is enforced by the database, not only by the code: triggers abort every UPDATE and
 * DELETE (and TRUNCATE on PostgreSQL). TypeORM rebuilds a SQLite table to alter it, which drops
 * its triggers, so a later migration that alters this table must create them again.
 */
export class CreateAuthEvents1735689600100 implements MigrationInterface {
  name = 'CreateAuthEvents1735689600100';

  async up(queryRunner: QueryRunner): Promise<void> {
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
    if (queryRunner.connection.options.type === 'postgres') {
      await queryRunner.query(
        `CREATE FUNCTION auth_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ ` +
          `BEGIN RAISE EXCEPTION '${AUTH_EVENTS_APPEND_ONLY_MESSAGE}'; END $$`,
      );
      await queryRunner.query(
        'CREATE TRIGGER "TRG_auth_events_append_only" BEFORE UPDATE OR DELETE ON "auth_events" ' +
          'FOR EACH ROW EXECUTE FUNCTION auth_events_append_only()',
      );
      await queryRunner.query(
        'CREATE TRIGGER "TRG_auth_events_no_truncate" BEFORE TRUNCATE ON "auth_events" ' +
          'FOR EACH STATEMENT EXECUTE FUNCTION auth_events_append_only()',
      );
      return;
    }
    for (const operation of ['UPDATE', 'DELETE']) {
      await queryRunner.query(
        `CREATE TRIGGER "TRG_auth_events_no_${operation.toLowerCase()}" ` +
          `BEFORE ${operation} ON "auth_events" ` +
          `BEGIN SELECT RAISE(ABORT, '${AUTH_EVENTS_APPEND_ONLY_MESSAGE}'); END`,
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Dropping the table drops its triggers; it is not a DELETE, so they do not fire.
    await queryRunner.dropTable('auth_events');
    if (queryRunner.connection.options.type === 'postgres') {
      await queryRunner.query('DROP FUNCTION auth_events_append_only()');
    }
  }
}
