import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { timestampType } from '../column-types.js';

/**
 * The sign-in codes mailed to an account (issue 27): one live code per account, its code as a
 * keyed digest and its link's token as a SHA-256 digest, its count of wrong tries. They go with
 * the account.
 */
export class CreateEmailCodes1798400000000 implements MigrationInterface {
  name = 'CreateEmailCodes1798400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const timestamp = timestampType(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'email_codes',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'userId', type: 'varchar', length: '36' },
          { name: 'email', type: 'varchar', length: '254' },
          { name: 'codeHash', type: 'varchar', length: '64' },
          { name: 'tokenHash', type: 'varchar', length: '64' },
          { name: 'attempts', type: 'integer', default: 0 },
          { name: 'createdAt', type: timestamp },
          { name: 'expiresAt', type: timestamp },
        ],
        indices: [
          { name: 'IDX_email_codes_userId', columnNames: ['userId'], isUnique: true },
          { name: 'IDX_email_codes_tokenHash', columnNames: ['tokenHash'], isUnique: true },
        ],
        foreignKeys: [
          {
            name: 'FK_email_codes_userId',
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
    await queryRunner.dropTable('email_codes');
  }
}
