import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { timestampType } from '../column-types.js';

/**
 * What the session list needs from a token family: the User-Agent of the request that created
 * each token, and the session's start time carried along the chain (the expired-token cleanup
 * deletes old generations, so the family's earliest surviving `createdAt` is not reliable).
 *
 * Existing rows get the earliest `createdAt` of their family as the start, the best that is still
 * known, and no User-Agent. No index is added: listing reads a user's rows through
 * IDX_refresh_tokens_userId, and another index would cost every refresh a write.
 */
export class AddRefreshTokenSessionColumns1795305600000 implements MigrationInterface {
  name = 'AddRefreshTokenSessionColumns1795305600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const timestamp = timestampType(queryRunner);
    await queryRunner.addColumns('refresh_tokens', [
      new TableColumn({
        name: 'createdByUserAgent',
        type: 'varchar',
        length: '256',
        isNullable: true,
      }),
      new TableColumn({ name: 'sessionStartedAt', type: timestamp, isNullable: true }),
    ]);
    await queryRunner.query(
      'UPDATE "refresh_tokens" SET "sessionStartedAt" = (' +
        'SELECT MIN("family"."createdAt") FROM "refresh_tokens" "family" ' +
        'WHERE "family"."familyId" = "refresh_tokens"."familyId")',
    );
    await queryRunner.changeColumn(
      'refresh_tokens',
      'sessionStartedAt',
      new TableColumn({ name: 'sessionStartedAt', type: timestamp, isNullable: false }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumns('refresh_tokens', ['sessionStartedAt', 'createdByUserAgent']);
  }
}
