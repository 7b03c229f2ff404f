import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Whether an OAuth client registered itself (issue 40: dynamic client registration) rather than
 * being registered by an operator. Existing clients are the operators' (false). Such a client is
 * never trusted: the consent page always asks, and says it is unverified.
 */
export class AddOAuthClientSelfRegistered1799150000000 implements MigrationInterface {
  name = 'AddOAuthClientSelfRegistered1799150000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn(
      'oauth_clients',
      new TableColumn({ name: 'isSelfRegistered', type: 'boolean', default: false }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('oauth_clients', 'isSelfRegistered');
  }
}
