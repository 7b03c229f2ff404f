import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { timestampType } from '../column-types.js';

/**
 * The key set (issue 25): asymmetric signing keys, their private halves sealed, and the instants
 * their states follow from; and rows that retire an HS256 secret by its `kid`. Read whole by each
 * instance on a timer, never on a request, so it needs no index beyond its key.
 */
export class CreateSigningKeys1798100000000 implements MigrationInterface {
  name = 'CreateSigningKeys1798100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const timestamp = timestampType(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'signing_keys',
        columns: [
          { name: 'kid', type: 'varchar', length: '64', isPrimary: true },
          { name: 'algorithm', type: 'varchar', length: '8' },
          { name: 'source', type: 'varchar', length: '16' },
          { name: 'publicKey', type: 'text', isNullable: true },
          { name: 'privateKey', type: 'text', isNullable: true },
          { name: 'createdAt', type: timestamp },
          { name: 'activatesAt', type: timestamp, isNullable: true },
          { name: 'retiredAt', type: timestamp, isNullable: true },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('signing_keys');
  }
}
