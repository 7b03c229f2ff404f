import { DataSource, type MigrationInterface } from 'typeorm';
import { parseConnectionString } from '../src/config/settings/connection-string.js';
import { ENTITIES } from '../src/database/data-source.js';
import { dataSourceOptions } from '../src/database/data-source-options.js';
import { AddRefreshTokenSessionColumns1795305600000 } from '../src/database/migrations/1795305600000-AddRefreshTokenSessionColumns.js';
import { MIGRATIONS } from '../src/database/migrations/index.js';
import { toSqliteDatetime } from '../src/database/sqlite-datetime.js';
import { Session } from '../src/tokens/entities/session.entity.js';
import { createTestDatabase, onPostgres, type TestDatabase } from './utils/test-database.js';
import { buildDatabaseConfig } from './factories/database-config.factory.js';

const USER_ID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
const FAMILY_A = '11111111-1111-4111-8111-111111111110';
const FAMILY_B = '22222222-2222-4222-8222-222222222220';
const DAY_MS = 24 * 60 * 60 * 1000;

const at = (iso: string): Date => new Date(iso);

/** Rows as they were before the migration, written with SQL: the entity has moved on. */
const OLD_ROWS = [
  // Family A lost generation 0 to the expired-token cleanup; its start is what is left.
  {
    id: '11111111-1111-4111-8111-111111111111',
    family: FAMILY_A,
    generation: 1,
    createdAt: at('2026-01-02T08:00:00.000Z'),
    isRevoked: true,
  },
  {
    id: '11111111-1111-4111-8111-111111111112',
    family: FAMILY_A,
    generation: 2,
    createdAt: at('2026-01-03T09:30:00.000Z'),
    isRevoked: false,
  },
  {
    id: FAMILY_B,
    family: FAMILY_B,
    generation: 0,
    createdAt: at('2026-01-04T10:00:00.250Z'),
    isRevoked: false,
  },
];

describe('migration AddRefreshTokenSessionColumns', () => {
  let database: TestDatabase;
  const open: DataSource[] = [];

  /** A data source on the test database that knows `migrations`. */
  async function connect(
    migrations: ReadonlyArray<new () => MigrationInterface>,
  ): Promise<DataSource> {
    const dataSource = new DataSource({
      ...dataSourceOptions(buildDatabaseConfig(parseConnectionString(database.connectionString)), {
        entities: ENTITIES,
      }),
      migrations: [...migrations],
    });
    open.push(await dataSource.initialize());
    return dataSource;
  }

  const timestamp = (date: Date): string =>
    onPostgres ? date.toISOString() : toSqliteDatetime(date);
  const flag = (value: boolean): boolean | number => (onPostgres ? value : value ? 1 : 0);

  beforeEach(async () => {
    database = await createTestDatabase();
    const before = MIGRATIONS.slice(
      0,
      MIGRATIONS.indexOf(AddRefreshTokenSessionColumns1795305600000),
    );
    const old = await connect(before);
    await old.runMigrations({ transaction: 'all' });
    await old.destroy();
    await database.query(
      `INSERT INTO users (id, username, email, "passwordHash", "createdAt") VALUES ($1, $2, $3, $4, $5)`,
      [USER_ID, 'alice', 'alice@example.com', 'x', timestamp(at('2026-01-01T00:00:00.000Z'))],
    );
    for (const row of OLD_ROWS) {
      await database.query(
        `INSERT INTO refresh_tokens
           (id, "tokenHash", "userId", "familyId", generation, "expiresAt", "createdAt",
            "createdByIp", "isRevoked")
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [
          row.id,
          row.id.replace(/-/g, '').padEnd(64, '0'),
          USER_ID,
          row.family,
          row.generation,
          timestamp(new Date(row.createdAt.getTime() + 7 * DAY_MS)),
          timestamp(row.createdAt),
          '203.0.113.7',
          flag(row.isRevoked),
        ],
      );
    }
  });

  afterEach(async () => {
    for (const dataSource of open.splice(0)) {
      if (dataSource.isInitialized) {
        await dataSource.destroy();
      }
    }
    await database.drop();
  });

  it("should start each existing session at its family's earliest surviving token, with no user agent", async () => {
    const migrated = await connect(MIGRATIONS);

    await migrated.runMigrations({ transaction: 'all' });

    // Since decision 0027 a session's start and user agent are its row's.
    const sessions = await migrated.getRepository(Session).find({ order: { id: 'ASC' } });
    expect(
      sessions.map(({ id, startedAt, lastUserAgent }) => ({ id, startedAt, lastUserAgent })),
    ).toEqual([
      { id: FAMILY_A, startedAt: OLD_ROWS[0].createdAt, lastUserAgent: null },
      { id: FAMILY_B, startedAt: OLD_ROWS[2].createdAt, lastUserAgent: null },
    ]);
  });

  it('should make the session start required once every row has one', async () => {
    const migrated = await connect(
      MIGRATIONS.slice(0, MIGRATIONS.indexOf(AddRefreshTokenSessionColumns1795305600000) + 1),
    );
    await migrated.runMigrations({ transaction: 'all' });

    const table = await migrated.createQueryRunner().getTable('refresh_tokens');

    expect(table?.findColumnByName('sessionStartedAt')?.isNullable).toBe(false);
    expect(table?.findColumnByName('createdByUserAgent')).toMatchObject({
      isNullable: true,
      length: '256',
    });
  });

  it('should revert to the previous schema, keeping every token, and migrate again', async () => {
    // Up to this migration, so that it is the last one, whatever came after it.
    const migrated = await connect(
      MIGRATIONS.slice(0, MIGRATIONS.indexOf(AddRefreshTokenSessionColumns1795305600000) + 1),
    );
    await migrated.runMigrations({ transaction: 'all' });

    await migrated.undoLastMigration({ transaction: 'all' });

    const reverted = await database.query<Record<string, unknown>>(
      'SELECT * FROM refresh_tokens ORDER BY id',
    );
    expect(reverted.map((row) => row.id)).toEqual(OLD_ROWS.map((row) => row.id));
    expect(Object.keys(reverted[0])).not.toContain('sessionStartedAt');
    expect(Object.keys(reverted[0])).not.toContain('createdByUserAgent');
    await migrated.runMigrations({ transaction: 'all' });
    const [{ count }] = await database.query<{ count: unknown }>(
      'SELECT count(*) AS count FROM refresh_tokens',
    );
    expect(Number(count)).toBe(OLD_ROWS.length);
  });
});
