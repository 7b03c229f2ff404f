import type { MigrationInterface, QueryRunner } from 'typeorm';
import { timestampType } from '../column-types.js';

/**
 * When an account's address was proven by a link mailed to it. Existing accounts start unproven
 * (null): their address was never checked, and access tokens must not claim otherwise
 * (docs/behaviour.md, E-mail verification).
 *
 * Plain ALTER TABLE on both engines: TypeORM's addColumn and dropColumn rebuild a SQLite table,
 * and a rebuild of `users` while a revert holds a transaction (where SQLite ignores
 * `foreign_keys = OFF`) would cascade into every table that references it.
 */
export class AddUserEmailVerifiedAt1796000000000 implements MigrationInterface {
  name = 'AddUserEmailVerifiedAt1796000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "users" ADD COLUMN "emailVerifiedAt" ${timestampType(queryRunner)} NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "users" DROP COLUMN "emailVerifiedAt"');
  }
}
