import { DataSource } from 'typeorm';
import { parseConnectionString } from '../src/config/settings/connection-string.js';
import { ENTITIES } from '../src/database/data-source.js';
import { dataSourceOptions } from '../src/database/data-source-options.js';
import { AddUserEmailVerifiedAt1796000000000 } from '../src/database/migrations/1796000000000-AddUserEmailVerifiedAt.js';
import { MIGRATIONS } from '../src/database/migrations/index.js';
import { toSqliteDatetime } from '../src/database/sqlite-datetime.js';
import { createTestDatabase, onPostgres, type TestDatabase } from './utils/test-database.js';
import { buildDatabaseConfig } from './factories/database-config.factory.js';

// The three migrations of the account flows on a database that already has accounts and
// sessions: they keep every row going up and coming down (a revert on SQLite runs inside a
// transaction, where SQLite ignores `foreign_keys = OFF`, so rebuilding `users` would cascade).

const USER_ID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
const TOKEN_ID = '11111111-1111-4111-8111-111111111111';
const FIRST_OF_ISSUE_17 = MIGRATIONS.indexOf(AddUserEmailVerifiedAt1796000000000);

describe('migrations of the account flows', () => {
  let database: TestDatabase;
  let dataSource: DataSource;

  /** A data source on the test database that knows `migrations`. */
  const connect = (migrations: typeof MIGRATIONS): Promise<DataSource> =>
    new DataSource({
      ...dataSourceOptions(buildDatabaseConfig(parseConnectionString(database.connectionString)), {
        entities: ENTITIES,
      }),
      migrations: [...migrations],
    }).initialize();

  const at = (iso: string): string =>
    onPostgres ? new Date(iso).toISOString() : toSqliteDatetime(new Date(iso));

  beforeEach(async () => {
    database = await createTestDatabase();
    dataSource = await connect(MIGRATIONS.slice(0, FIRST_OF_ISSUE_17));
    await dataSource.runMigrations({ transaction: 'all' });
    await dataSource.destroy();
    await database.query(
      'INSERT INTO users (id, username, email, "passwordHash", "createdAt") VALUES ($1, $2, $3, $4, $5)',
      [USER_ID, 'alice', 'alice@example.com', 'x', at('2026-01-01T00:00:00.000Z')],
    );
    const started = at('2026-01-01T00:00:00.000Z');
    await database.query(
      `INSERT INTO refresh_tokens (id, "tokenHash", "userId", "familyId", generation, "expiresAt",
         "createdAt", "createdByIp", "sessionStartedAt")
       VALUES ($1, $2, $3, $4, 0, $5, $6, '203.0.113.7', $7)`,
      [
        TOKEN_ID,
        'a'.repeat(64),
        USER_ID,
        TOKEN_ID,
        at('2026-01-08T00:00:00.000Z'),
        started,
        started,
      ],
    );
    dataSource = await connect(MIGRATIONS);
  });

  afterEach(async () => {
    if (dataSource.isInitialized) {
      await dataSource.destroy();
    }
    await database.drop();
  });

  it('should leave existing accounts unverified and keep their sessions', async () => {
    await dataSource.runMigrations({ transaction: 'all' });

    expect(await database.query('SELECT "id", "emailVerifiedAt" FROM users')).toEqual([
      { id: USER_ID, emailVerifiedAt: null },
    ]);
    // Since decision 0027 the token's session keeps the family id, which was its own id.
    expect(await database.query('SELECT "sessionId" AS "id" FROM refresh_tokens')).toEqual([
      { id: TOKEN_ID },
    ]);
  });

  it('should revert all three without losing an account or a session, and migrate again', async () => {
    await dataSource.runMigrations({ transaction: 'all' });

    for (let step = FIRST_OF_ISSUE_17; step < MIGRATIONS.length; step += 1) {
      await dataSource.undoLastMigration({ transaction: 'all' });
    }

    const [user] = await database.query('SELECT * FROM users');
    expect(Object.keys(user ?? {})).not.toContain('emailVerifiedAt');
    expect(await database.query('SELECT "id" FROM refresh_tokens')).toEqual([{ id: TOKEN_ID }]);
    await dataSource.runMigrations({ transaction: 'all' });
    expect(await database.query('SELECT "sessionId" AS "id" FROM refresh_tokens')).toEqual([
      { id: TOKEN_ID },
    ]);
  });
});
