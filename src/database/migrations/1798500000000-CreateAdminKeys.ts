import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { timestampType } from '../column-types.js';

/**
 * Admin API keys (issue 28): a name, scopes and the digest of the secret, never the secret. The
 * digest is what a request is looked up by; `revokedAt` is indexed for the "does any key exist"
 * check that keeps the admin API a 404 until one does.
 */
export class CreateAdminKeys1798500000000 implements MigrationInterface {
  name = 'CreateAdminKeys1798500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const timestamp = timestampType(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'admin_keys',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'name', type: 'varchar', length: '64' },
          { name: 'keyDigest', type: 'varchar', length: '64' },
          { name: 'scopes', type: 'varchar', length: '255' },
          { name: 'createdAt', type: timestamp },
          { name: 'revokedAt', type: timestamp, isNullable: true },
        ],
        uniques: [
          { name: 'UQ_admin_keys_name', columnNames: ['name'] },
          { name: 'UQ_admin_keys_keyDigest', columnNames: ['keyDigest'] },
        ],
        indices: [{ name: 'IDX_admin_keys_revokedAt', columnNames: ['revokedAt'] }],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('admin_keys');
  }
}
