import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { timestampType } from '../column-types.js';

/**
 * Decision 0027: what a session is and shows moves from every refresh token to one `sessions`
 * row, and a refresh token becomes its digest (32 bytes, the key), its session, its generation
 * and its creation.
 *
 * Each family's newest token gives its session: the user, start, `authMethods`, the newest
 * generation, last use (creation, IP, User-Agent) and expiry; a revoked newest token gives how
 * the session ended (so logged-out, revoked-all and reuse-ended sessions stay ended). The oldest
 * surviving token of the family gives `oldestTokenAt`. Every token keeps its digest (hex text
 * to bytes), family and generation, so a token rotated before the upgrade is still an older
 * generation of its session: presenting it again is reuse. Nothing else a token row held is read
 * any more: a rotated token's revocation is its successor's creation.
 */
export class LeanTokenRows1797000000000 implements MigrationInterface {
  name = 'LeanTokenRows1797000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const postgres = queryRunner.connection.options.type === 'postgres';
    const timestamp = timestampType(queryRunner);
    await queryRunner.createTable(sessionsTable(timestamp));
    await queryRunner.query(
      'INSERT INTO "sessions" ("id", "userId", "startedAt", "authMethods", "generation", ' +
        '"lastUsedAt", "lastIp", "lastUserAgent", "expiresAt", "oldestTokenAt", "endedAt", ' +
        '"endedByIp", "endReason") ' +
        'SELECT n."familyId", n."userId", n."sessionStartedAt", n."authMethods", n."generation", ' +
        'n."createdAt", n."createdByIp", n."createdByUserAgent", n."expiresAt", ' +
        '(SELECT MIN(f."createdAt") FROM "refresh_tokens" f WHERE f."familyId" = n."familyId"), ' +
        'CASE WHEN n."isRevoked" THEN COALESCE(n."revokedAt", n."createdAt") END, ' +
        'CASE WHEN n."isRevoked" THEN COALESCE(n."revokedByIp", n."createdByIp") END, ' +
        'CASE WHEN n."isRevoked" THEN COALESCE(n."reasonRevoked", \'\') END ' +
        'FROM "refresh_tokens" n WHERE n."generation" = ' +
        '(SELECT MAX(f."generation") FROM "refresh_tokens" f WHERE f."familyId" = n."familyId")',
    );
    await queryRunner.query('ALTER TABLE "refresh_tokens" RENAME TO "refresh_tokens_v1"');
    await queryRunner.createTable(tokensTable(timestamp, postgres));
    await queryRunner.query(
      'INSERT INTO "refresh_tokens" ("tokenHash", "sessionId", "generation", "createdAt") ' +
        `SELECT ${postgres ? 'decode("tokenHash", \'hex\')' : 'unhex("tokenHash")'}, ` +
        '"familyId", "generation", "createdAt" FROM "refresh_tokens_v1"',
    );
    await queryRunner.query('DROP TABLE "refresh_tokens_v1"');
  }

  /**
   * The previous layout, rebuilt from sessions and tokens: ids made from the session id and the
   * generation (the first token's is the session id, as a family id was), a rotated token
   * revoked at its successor's creation and replaced by it, the newest token ended as its
   * session ended. Every token expires when its session does.
   */
  async down(queryRunner: QueryRunner): Promise<void> {
    const postgres = queryRunner.connection.options.type === 'postgres';
    const timestamp = timestampType(queryRunner);
    const idOf = (alias: string): string =>
      postgres
        ? `CASE WHEN ${alias}."generation" = 0 THEN ${alias}."sessionId" ELSE ` +
          `left(${alias}."sessionId", 26) || '-' || lpad(${alias}."generation"::text, 9, '0') END`
        : `CASE WHEN ${alias}."generation" = 0 THEN ${alias}."sessionId" ELSE ` +
          `substr(${alias}."sessionId", 1, 26) || printf('-%09d', ${alias}."generation") END`;
    const hex = postgres ? 'encode(t."tokenHash", \'hex\')' : 'lower(hex(t."tokenHash"))';
    await queryRunner.query('ALTER TABLE "refresh_tokens" RENAME TO "refresh_tokens_v2"');
    await queryRunner.createTable(previousTokensTable(timestamp));
    await queryRunner.query(
      'INSERT INTO "refresh_tokens" ("id", "tokenHash", "userId", "familyId", "generation", ' +
        '"expiresAt", "createdAt", "createdByIp", "isRevoked", "revokedAt", "revokedByIp", ' +
        '"reasonRevoked", "replacedByTokenId", "createdByUserAgent", "sessionStartedAt", ' +
        '"authMethods") ' +
        `SELECT ${idOf('t')}, ${hex}, s."userId", t."sessionId", t."generation", s."expiresAt", ` +
        't."createdAt", s."lastIp", ' +
        `CASE WHEN t."generation" < s."generation" OR s."endedAt" IS NOT NULL THEN ${postgres ? 'true' : '1'} ELSE ${postgres ? 'false' : '0'} END, ` +
        'CASE WHEN t."generation" < s."generation" THEN n."createdAt" ELSE s."endedAt" END, ' +
        'CASE WHEN t."generation" < s."generation" THEN s."lastIp" ELSE s."endedByIp" END, ' +
        'CASE WHEN t."generation" < s."generation" THEN \'Replaced by new token\' ' +
        'ELSE s."endReason" END, ' +
        `CASE WHEN n."sessionId" IS NULL THEN NULL ELSE ${idOf('n')} END, ` +
        'CASE WHEN t."generation" = s."generation" THEN s."lastUserAgent" END, ' +
        's."startedAt", s."authMethods" ' +
        'FROM "refresh_tokens_v2" t JOIN "sessions" s ON s."id" = t."sessionId" ' +
        'LEFT JOIN "refresh_tokens_v2" n ON n."sessionId" = t."sessionId" ' +
        'AND n."generation" = t."generation" + 1',
    );
    await queryRunner.query('DROP TABLE "refresh_tokens_v2"');
    await queryRunner.dropTable('sessions');
  }
}

function sessionsTable(timestamp: string): Table {
  return new Table({
    name: 'sessions',
    columns: [
      { name: 'id', type: 'varchar', length: '36', isPrimary: true },
      { name: 'userId', type: 'varchar', length: '36' },
      { name: 'startedAt', type: timestamp },
      { name: 'authMethods', type: 'varchar', length: '32', isNullable: true },
      { name: 'generation', type: 'integer' },
      { name: 'lastUsedAt', type: timestamp },
      { name: 'lastIp', type: 'varchar', length: '64' },
      { name: 'lastUserAgent', type: 'varchar', length: '256', isNullable: true },
      { name: 'expiresAt', type: timestamp },
      { name: 'oldestTokenAt', type: timestamp },
      { name: 'endedAt', type: timestamp, isNullable: true },
      { name: 'endedByIp', type: 'varchar', length: '64', isNullable: true },
      { name: 'endReason', type: 'varchar', length: '500', isNullable: true },
    ],
    indices: [
      { name: 'IDX_sessions_userId', columnNames: ['userId'] },
      { name: 'IDX_sessions_oldestTokenAt', columnNames: ['oldestTokenAt'] },
    ],
    foreignKeys: [
      {
        name: 'FK_sessions_userId',
        columnNames: ['userId'],
        referencedTableName: 'users',
        referencedColumnNames: ['id'],
        onDelete: 'CASCADE',
      },
    ],
  });
}

function tokensTable(timestamp: string, postgres: boolean): Table {
  return new Table({
    name: 'refresh_tokens',
    // SQLite: the digest is the table's key itself, not a rowid plus a second index on it.
    withoutRowid: !postgres,
    columns: [
      { name: 'tokenHash', type: postgres ? 'bytea' : 'blob', isPrimary: true },
      { name: 'sessionId', type: 'varchar', length: '36' },
      { name: 'generation', type: 'integer' },
      { name: 'createdAt', type: timestamp },
    ],
    indices: [{ name: 'IDX_refresh_tokens_session', columnNames: ['sessionId', 'generation'] }],
    foreignKeys: [
      {
        name: 'FK_refresh_tokens_sessionId',
        columnNames: ['sessionId'],
        referencedTableName: 'sessions',
        referencedColumnNames: ['id'],
        onDelete: 'CASCADE',
      },
    ],
  });
}

/** `refresh_tokens` as migrations up to 1796180000000 left it. */
function previousTokensTable(timestamp: string): Table {
  return new Table({
    name: 'refresh_tokens',
    columns: [
      { name: 'id', type: 'varchar', length: '36', isPrimary: true },
      { name: 'tokenHash', type: 'varchar', length: '64' },
      { name: 'userId', type: 'varchar', length: '36' },
      { name: 'familyId', type: 'varchar', length: '36' },
      { name: 'generation', type: 'integer' },
      { name: 'expiresAt', type: timestamp },
      { name: 'createdAt', type: timestamp },
      { name: 'createdByIp', type: 'varchar', length: '64' },
      { name: 'isRevoked', type: 'boolean', default: false },
      { name: 'revokedAt', type: timestamp, isNullable: true },
      { name: 'revokedByIp', type: 'varchar', length: '64', isNullable: true },
      { name: 'reasonRevoked', type: 'varchar', length: '500', isNullable: true },
      { name: 'replacedByTokenId', type: 'varchar', length: '36', isNullable: true },
      { name: 'createdByUserAgent', type: 'varchar', length: '256', isNullable: true },
      { name: 'sessionStartedAt', type: timestamp },
      { name: 'authMethods', type: 'varchar', length: '32', isNullable: true },
    ],
    indices: [
      { name: 'IDX_refresh_tokens_tokenHash', columnNames: ['tokenHash'], isUnique: true },
      { name: 'IDX_refresh_tokens_userId', columnNames: ['userId'] },
      { name: 'IDX_refresh_tokens_family', columnNames: ['familyId', 'generation'] },
      { name: 'IDX_refresh_tokens_expiresAt', columnNames: ['expiresAt'] },
    ],
    foreignKeys: [
      {
        name: 'FK_refresh_tokens_userId',
        columnNames: ['userId'],
        referencedTableName: 'users',
        referencedColumnNames: ['id'],
        onDelete: 'CASCADE',
      },
    ],
  });
}
