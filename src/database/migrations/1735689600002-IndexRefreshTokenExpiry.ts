import { TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Lets the expired-token cleanup find its batch without scanning the table. */
export class IndexRefreshTokenExpiry1735689600002 implements MigrationInterface {
  name = 'IndexRefreshTokenExpiry1735689600002';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createIndex(
      'refresh_tokens',
      new TableIndex({ name: 'IDX_refresh_tokens_expiresAt', columnNames: ['expiresAt'] }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('refresh_tokens', 'IDX_refresh_tokens_expiresAt');
  }
}
