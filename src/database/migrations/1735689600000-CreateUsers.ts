import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { timestampType } from '../column-types.js';

export class CreateUsers1735689600000 implements MigrationInterface {
  name = 'CreateUsers1735689600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const timestamp = timestampType(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'users',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'username', type: 'varchar', length: '100' },
          { name: 'email', type: 'varchar', length: '254' },
          { name: 'passwordHash', type: 'varchar', length: '255' },
          { name: 'failedLoginAttempts', type: 'integer', default: 0 },
          { name: 'lockoutEnd', type: timestamp, isNullable: true },
          { name: 'isActive', type: 'boolean', default: true },
          { name: 'createdAt', type: timestamp },
          { name: 'lastLoginAt', type: timestamp, isNullable: true },
        ],
        uniques: [{ name: 'UQ_users_email', columnNames: ['email'] }],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('users');
  }
}
