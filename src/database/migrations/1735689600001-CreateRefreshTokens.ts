import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { timestampType } from '../column-types.js';

export class CreateRefreshTokens1735689600001 implements MigrationInterface {
  name = 'CreateRefreshTokens1735689600001';

  async up(queryRunner: QueryRunner): Promise<void> {
    const timestamp = timestampType(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'refresh_tokens',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'tokenHash', type: 'varchar', length: '64' },
          { name: 'userId', type: 'varchar', length: '36' },
          { name: 'familyId', type: 'varchar', length: '36' },
          { name: 'generation', type: 'integer' },
          { name: 'expiresAt', type: timestamp },
          { name: 'createdAt', type: timestamp },
          { name: 'createdByIp', type: 'varchar', length: '64' },
          { name: 'isRevoked', type: 'boolean', default: false },
          { name: 'revokedAt', type: timestamp, isNullable: true },
          { name: 'revokedByIp', type: 'varchar', length: '64', isNullable: true },
          { name: 'reasonRevoked', type: 'varchar', length: '500', isNullable: true },
          { name: 'replacedByTokenId', type: 'varchar', length: '36', isNullable: true },
        ],
        indices: [
          { name: 'IDX_refresh_tokens_tokenHash', columnNames: ['tokenHash'], isUnique: true },
          { name: 'IDX_refresh_tokens_userId', columnNames: ['userId'] },
          { name: 'IDX_refresh_tokens_family', columnNames: ['familyId', 'generation'] },
        ],
        foreignKeys: [
          {
            name: 'FK_refresh_tokens_userId',
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
    await queryRunner.dropTable('refresh_tokens');
  }
}
