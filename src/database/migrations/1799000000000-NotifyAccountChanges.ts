import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * PostgreSQL only: every change of a `users` row, whoever makes it (an instance, the admin CLI or
 * API, a migration, a person with psql), notifies channel `keygate_account_state` with the
 * account's id when its transaction commits; a TRUNCATE notifies `*`. The account cache
 * (Database__AccountCache, src/users/account-cache) listens there; with no listener the
 * notification is dropped. On SQLite there is no cache and nothing to do (reads are local).
 */
export class NotifyAccountChanges1799000000000 implements MigrationInterface {
  name = 'NotifyAccountChanges1799000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.options.type !== 'postgres') {
      return;
    }
    await queryRunner.query(
      'CREATE FUNCTION users_notify_account_change() RETURNS trigger LANGUAGE plpgsql AS $$ ' +
        "BEGIN IF TG_OP = 'TRUNCATE' THEN PERFORM pg_notify('keygate_account_state', '*'); " +
        'ELSE PERFORM pg_notify(\'keygate_account_state\', OLD."id"); END IF; ' +
        'RETURN NULL; END $$',
    );
    await queryRunner.query(
      'CREATE TRIGGER "TRG_users_notify_change" AFTER UPDATE OR DELETE ON "users" ' +
        'FOR EACH ROW EXECUTE FUNCTION users_notify_account_change()',
    );
    await queryRunner.query(
      'CREATE TRIGGER "TRG_users_notify_truncate" AFTER TRUNCATE ON "users" ' +
        'FOR EACH STATEMENT EXECUTE FUNCTION users_notify_account_change()',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.options.type !== 'postgres') {
      return;
    }
    await queryRunner.query('DROP TRIGGER "TRG_users_notify_truncate" ON "users"');
    await queryRunner.query('DROP TRIGGER "TRG_users_notify_change" ON "users"');
    await queryRunner.query('DROP FUNCTION users_notify_account_change()');
  }
}
