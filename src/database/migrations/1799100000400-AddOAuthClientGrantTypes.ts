import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The grants each OpenID provider client is registered for (issue 40: the device and client
 * credentials grants). Existing clients keep what they had, the authorization code grant.
 *
 * Plain ALTER TABLE on both engines, as AddUserEmailVerifiedAt does: TypeORM's addColumn
 * rebuilds a SQLite table.
 */
export class AddOAuthClientGrantTypes1799100000400 implements MigrationInterface {
  name = 'AddOAuthClientGrantTypes1799100000400';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "oauth_clients" ADD COLUMN "grantTypes" varchar(255) NOT NULL DEFAULT 'authorization_code'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "oauth_clients" DROP COLUMN "grantTypes"');
  }
}
