import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * A consent's `clientId` holds the URL of a client ID metadata document (issue 40) as well as an
 * operator's UUID: up to OAUTH_CLIENT_ID_MAX_LENGTH characters, not 36. PostgreSQL refused a
 * longer one (`value too long`); SQLite, which does not enforce lengths, had hidden it.
 */
export class WidenOAuthConsentClientId1799160000000 implements MigrationInterface {
  name = 'WidenOAuthConsentClientId1799160000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await resize(queryRunner, 2048);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await resize(queryRunner, 36);
  }
}

async function resize(queryRunner: QueryRunner, length: number): Promise<void> {
  if (queryRunner.connection.options.type === 'postgres') {
    // In place: TypeORM's changeColumn drops and re-adds a column whose length changes, and with
    // it every consent.
    await queryRunner.query(
      `ALTER TABLE "oauth_consents" ALTER COLUMN "clientId" TYPE varchar(${length})`,
    );
    return;
  }
  // SQLite: the table is rebuilt with its rows (the declared type is all that changes).
  await queryRunner.changeColumn(
    'oauth_consents',
    'clientId',
    new TableColumn({ name: 'clientId', type: 'varchar', length: String(length), isPrimary: true }),
  );
}
