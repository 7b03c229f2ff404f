import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { timestampType } from '../../../src/database/column-types.js';

export class CreateProfiles1800000000000 implements MigrationInterface {
  name = 'CreateProfiles1800000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'profiles',
        columns: [
          { name: 'userId', type: 'varchar', length: '36', isPrimary: true },
          { name: 'displayName', type: 'varchar', length: '100', isNullable: true },
          { name: 'createdAt', type: timestampType(queryRunner) },
        ],
        foreignKeys: [
          {
            name: 'FK_profiles_userId',
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
    await queryRunner.dropTable('profiles');
  }
}
