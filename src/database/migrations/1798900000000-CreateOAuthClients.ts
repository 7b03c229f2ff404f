import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { timestampType } from '../column-types.js';

/**
 * The applications Keygate signs people in for as an OpenID provider (issue 39): their redirect
 * URIs, whether they are public, their scopes and the digest of a confidential one's secret.
 */
export class CreateOAuthClients1798900000000 implements MigrationInterface {
  name = 'CreateOAuthClients1798900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'oauth_clients',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'name', type: 'varchar', length: '100' },
          { name: 'redirectUris', type: 'text' },
          { name: 'postLogoutRedirectUris', type: 'text' },
          { name: 'isPublic', type: 'boolean' },
          { name: 'scopes', type: 'varchar', length: '255' },
          { name: 'secretDigest', type: 'varchar', length: '64', isNullable: true },
          { name: 'createdAt', type: timestampType(queryRunner) },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('oauth_clients');
  }
}
