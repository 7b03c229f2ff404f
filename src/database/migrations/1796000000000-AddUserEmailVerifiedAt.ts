import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { timestampType } from '../column-types.js';

/**
 * When an account's address was proven by a link mailed to it. Existing accounts start unproven
 * (null): their address was never checked, and access tokens must not claim otherwise
 * (docs/behaviour.md, E-mail verification).
 */
export class AddUserEmailVerifiedAt1796000000000 implements MigrationInterface {
  name = 'AddUserEmailVerifiedAt1796000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn(
      'users',
      new TableColumn({
        name: 'emailVerifiedAt',
        type: timestampType(queryRunner),
        isNullable: true,
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('users', 'emailVerifiedAt');
  }
}
