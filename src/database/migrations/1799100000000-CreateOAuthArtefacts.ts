import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { timestampType } from '../column-types.js';

/**
 * The OpenID provider's storage (issue 39): codes, tokens, grants, sessions and interactions,
 * each keyed by its kind and the SHA-256 of its id (the id itself is never stored).
 */
export class CreateOAuthArtefacts1799100000000 implements MigrationInterface {
  name = 'CreateOAuthArtefacts1799100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const timestamp = timestampType(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'oauth_artefacts',
        columns: [
          { name: 'kind', type: 'varchar', length: '40', isPrimary: true },
          { name: 'idDigest', type: 'varchar', length: '64', isPrimary: true },
          { name: 'payload', type: 'text' },
          { name: 'grantId', type: 'varchar', length: '64', isNullable: true },
          { name: 'uidDigest', type: 'varchar', length: '64', isNullable: true },
          { name: 'userCodeDigest', type: 'varchar', length: '64', isNullable: true },
          { name: 'expiresAt', type: timestamp, isNullable: true },
          { name: 'consumedAt', type: timestamp, isNullable: true },
        ],
        indices: [
          { name: 'IDX_oauth_artefacts_grantId', columnNames: ['grantId'] },
          { name: 'IDX_oauth_artefacts_expiresAt', columnNames: ['expiresAt'] },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('oauth_artefacts');
  }
}
