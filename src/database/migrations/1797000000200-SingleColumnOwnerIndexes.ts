import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A refresh token's session and an audit row's account are indexed on that one column (decision
 * 0031). PostgreSQL stores the entries of one key once, with a list of row addresses, so a
 * session's tokens and an account's events cost a few bytes each in these indexes instead of a
 * whole key each, in pages that appends leave half full. On SQLite, whose tables are keyed by
 * the digest and the event id (WITHOUT ROWID), every index entry already carries that key.
 */
export class SingleColumnOwnerIndexes1797000000200 implements MigrationInterface {
  name = 'SingleColumnOwnerIndexes1797000000200';

  async up(queryRunner: QueryRunner): Promise<void> {
    await replaceIndex(queryRunner, 'refresh_tokens', 'IDX_refresh_tokens_session', {
      name: 'IDX_refresh_tokens_sessionId',
      columnNames: ['sessionId'],
    });
    await replaceIndex(queryRunner, 'auth_events', 'IDX_auth_events_userId_id', {
      name: 'IDX_auth_events_userId',
      columnNames: ['userId'],
    });
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await replaceIndex(queryRunner, 'refresh_tokens', 'IDX_refresh_tokens_sessionId', {
      name: 'IDX_refresh_tokens_session',
      columnNames: ['sessionId', 'generation'],
    });
    await replaceIndex(queryRunner, 'auth_events', 'IDX_auth_events_userId', {
      name: 'IDX_auth_events_userId_id',
      columnNames: ['userId', 'id'],
    });
  }
}

async function replaceIndex(
  queryRunner: QueryRunner,
  table: string,
  old: string,
  replacement: { readonly name: string; readonly columnNames: string[] },
): Promise<void> {
  await queryRunner.query(`DROP INDEX "${old}"`);
  // The statement queryRunner.createIndex issues, without the six catalogue queries it makes
  // first to load the table.
  const columns = replacement.columnNames.map((column) => `"${column}"`).join(', ');
  await queryRunner.query(`CREATE INDEX "${replacement.name}" ON "${table}" (${columns}) `);
}
