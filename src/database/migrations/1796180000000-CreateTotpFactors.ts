import { Table, TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { timestampType } from '../column-types.js';

/**
 * The TOTP second factor (issue 18): one factor per account, its secret encrypted, with the last
 * time step accepted; the account's unspent recovery codes as digests; and, on each refresh
 * token, how the session was authenticated (`pwd`, or `pwd otp`), so rotation keeps the `amr`
 * claim. Existing tokens keep null there, which reads as `pwd`: their sessions used a password.
 */
export class CreateTotpFactors1796180000000 implements MigrationInterface {
  name = 'CreateTotpFactors1796180000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const timestamp = timestampType(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'totp_factors',
        columns: [
          { name: 'userId', type: 'varchar', length: '36', isPrimary: true },
          { name: 'sealedSecret', type: 'varchar', length: '255' },
          { name: 'createdAt', type: timestamp },
          { name: 'confirmedAt', type: timestamp, isNullable: true },
          { name: 'lastUsedStep', type: 'integer', isNullable: true },
        ],
        foreignKeys: [
          {
            name: 'FK_totp_factors_userId',
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
        name: 'recovery_codes',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'userId', type: 'varchar', length: '36' },
          { name: 'codeHash', type: 'varchar', length: '64' },
          { name: 'createdAt', type: timestamp },
        ],
        indices: [
          {
            name: 'IDX_recovery_codes_userId_codeHash',
            columnNames: ['userId', 'codeHash'],
            isUnique: true,
          },
        ],
        foreignKeys: [
          {
            name: 'FK_recovery_codes_userId',
            columnNames: ['userId'],
            referencedTableName: 'users',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
        ],
      }),
    );
    await queryRunner.addColumn(
      'refresh_tokens',
      new TableColumn({ name: 'authMethods', type: 'varchar', length: '32', isNullable: true }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('refresh_tokens', 'authMethods');
    await queryRunner.dropTable('recovery_codes');
    await queryRunner.dropTable('totp_factors');
  }
}
