import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { timestampType } from '../column-types.js';

/**
 * Passkeys (issue 27): each account's WebAuthn credentials, with only what verifying an assertion
 * needs (credential id, public key, signature counter, transports, backup flags) and what the
 * person sees (name, creation, last use); and the challenges of ceremonies under way, as
 * digests, each for one ceremony kind (and one account when it is known) until it expires or is
 * used. Deleting an account deletes both (foreign keys with ON DELETE CASCADE).
 */
export class CreatePasskeys1798300000000 implements MigrationInterface {
  name = 'CreatePasskeys1798300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const timestamp = timestampType(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'passkeys',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'userId', type: 'varchar', length: '36' },
          { name: 'credentialId', type: 'varchar', length: '1400' },
          { name: 'publicKey', type: 'varchar', length: '1024' },
          { name: 'counter', type: 'integer' },
          { name: 'transports', type: 'varchar', length: '128', isNullable: true },
          { name: 'isBackupEligible', type: 'boolean' },
          { name: 'isBackedUp', type: 'boolean' },
          { name: 'name', type: 'varchar', length: '64' },
          { name: 'createdAt', type: timestamp },
          { name: 'lastUsedAt', type: timestamp, isNullable: true },
        ],
        indices: [
          { name: 'IDX_passkeys_credentialId', columnNames: ['credentialId'], isUnique: true },
          { name: 'IDX_passkeys_userId', columnNames: ['userId'] },
        ],
        foreignKeys: [
          {
            name: 'FK_passkeys_userId',
            columnNames: ['userId'],
            referencedTableName: 'users',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'passkey_challenges',
        columns: [
          { name: 'challengeHash', type: 'varchar', length: '64', isPrimary: true },
          { name: 'ceremony', type: 'varchar', length: '16' },
          { name: 'userId', type: 'varchar', length: '36', isNullable: true },
          { name: 'expiresAt', type: timestamp },
        ],
        indices: [
          { name: 'IDX_passkey_challenges_userId', columnNames: ['userId'] },
          { name: 'IDX_passkey_challenges_expiresAt', columnNames: ['expiresAt'] },
        ],
        foreignKeys: [
          {
            name: 'FK_passkey_challenges_userId',
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
    await queryRunner.dropTable('passkey_challenges');
    await queryRunner.dropTable('passkeys');
  }
}
