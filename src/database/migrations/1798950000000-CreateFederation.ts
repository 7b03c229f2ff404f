import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { timestampType } from '../column-types.js';

/**
 * Sign-in through other identity providers (issue 38): the identities linked to accounts, named
 * by (issuer, subject); the flows under way, stored only as the digest of their `state`; and the
 * one-time codes a finished flow hands to its front end, stored only as digests. All go with the
 * account; no provider token is ever stored.
 */
export class CreateFederation1798950000000 implements MigrationInterface {
  name = 'CreateFederation1798950000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const timestamp = timestampType(queryRunner);
    const owner = (table: string) => ({
      name: `FK_${table}_userId`,
      columnNames: ['userId'],
      referencedTableName: 'users',
      referencedColumnNames: ['id'],
      onDelete: 'CASCADE',
    });
    await queryRunner.createTable(
      new Table({
        name: 'federated_identities',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'userId', type: 'varchar', length: '36' },
          { name: 'provider', type: 'varchar', length: '40' },
          { name: 'issuer', type: 'varchar', length: '512' },
          { name: 'subject', type: 'varchar', length: '255' },
          { name: 'email', type: 'varchar', length: '254', isNullable: true },
          { name: 'linkedAt', type: timestamp },
          { name: 'lastUsedAt', type: timestamp, isNullable: true },
        ],
        indices: [
          {
            name: 'IDX_federated_identities_issuer_subject',
            columnNames: ['issuer', 'subject'],
            isUnique: true,
          },
          { name: 'IDX_federated_identities_userId', columnNames: ['userId'] },
        ],
        foreignKeys: [owner('federated_identities')],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'federation_flows',
        columns: [
          { name: 'stateHash', type: 'varchar', length: '64', isPrimary: true },
          { name: 'provider', type: 'varchar', length: '40' },
          { name: 'purpose', type: 'varchar', length: '16' },
          { name: 'userId', type: 'varchar', length: '36', isNullable: true },
          { name: 'redirectTo', type: 'varchar', length: '2048' },
          { name: 'codeChallenge', type: 'varchar', length: '128' },
          { name: 'createdAt', type: timestamp },
          { name: 'expiresAt', type: timestamp },
        ],
        indices: [
          { name: 'IDX_federation_flows_expiresAt', columnNames: ['expiresAt'] },
          // Deleting an account deletes its link flows: without it, a whole-table scan.
          { name: 'IDX_federation_flows_userId', columnNames: ['userId'] },
        ],
        foreignKeys: [owner('federation_flows')],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'federation_codes',
        columns: [
          { name: 'codeHash', type: 'varchar', length: '64', isPrimary: true },
          { name: 'userId', type: 'varchar', length: '36' },
          { name: 'provider', type: 'varchar', length: '40' },
          { name: 'codeChallenge', type: 'varchar', length: '128' },
          { name: 'createdAt', type: timestamp },
          { name: 'expiresAt', type: timestamp },
        ],
        indices: [
          { name: 'IDX_federation_codes_userId', columnNames: ['userId'] },
          { name: 'IDX_federation_codes_expiresAt', columnNames: ['expiresAt'] },
        ],
        foreignKeys: [owner('federation_codes')],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('federation_codes');
    await queryRunner.dropTable('federation_flows');
    await queryRunner.dropTable('federated_identities');
  }
}
