import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { timestampType } from '../column-types.js';

/**
 * The single-use tokens that mailed links carry (password reset, e-mail verification and change),
 * stored only as SHA-256 digests. One live token per account and purpose; they go with the
 * account.
 */
export class CreateAccountTokens1796000000001 implements MigrationInterface {
  name = 'CreateAccountTokens1796000000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    const timestamp = timestampType(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'account_tokens',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'userId', type: 'varchar', length: '36' },
          { name: 'purpose', type: 'varchar', length: '20' },
          { name: 'tokenHash', type: 'varchar', length: '64' },
          { name: 'email', type: 'varchar', length: '254' },
          { name: 'createdAt', type: timestamp },
          { name: 'expiresAt', type: timestamp },
        ],
        indices: [
          { name: 'IDX_account_tokens_tokenHash', columnNames: ['tokenHash'], isUnique: true },
          {
            name: 'IDX_account_tokens_userId_purpose',
            columnNames: ['userId', 'purpose'],
            isUnique: true,
          },
        ],
        foreignKeys: [
          {
            name: 'FK_account_tokens_userId',
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
    await queryRunner.dropTable('account_tokens');
  }
}
