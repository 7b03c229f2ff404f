import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { timestampType } from '../column-types.js';

/**
 * The OpenID provider's consents (issue 39): which scopes a person granted which client, and the
 * protocol library's grant behind them. They go with the account.
 */
export class CreateOAuthConsents1799100000100 implements MigrationInterface {
  name = 'CreateOAuthConsents1799100000100';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'oauth_consents',
        columns: [
          { name: 'userId', type: 'varchar', length: '36', isPrimary: true },
          { name: 'clientId', type: 'varchar', length: '36', isPrimary: true },
          { name: 'scopes', type: 'varchar', length: '255' },
          { name: 'grantId', type: 'varchar', length: '64' },
          { name: 'grantedAt', type: timestampType(queryRunner) },
        ],
        foreignKeys: [
          {
            name: 'FK_oauth_consents_userId',
            columnNames: ['userId'],
            referencedTableName: 'users',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('oauth_consents');
  }
}
