import { DataSource, TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { dataSourceOptions } from './data-source-options.js';
import { MIGRATIONS } from './migrations/index.js';
import { runMigrations } from './run-migrations.js';
import { buildDatabaseConfig } from '../../test/factories/database-config.factory.js';

/** An extension's migration dated before every core one, which needs the core's users table. */
class AddUserNickname1700000000000 implements MigrationInterface {
  name = 'AddUserNickname1700000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn(
      'users',
      new TableColumn({ name: 'nickname', type: 'varchar', isNullable: true }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('users', 'nickname');
  }
}

describe(runMigrations.name, () => {
  let dataSource: DataSource;

  beforeEach(async () => {
    dataSource = await new DataSource(
      dataSourceOptions(
        buildDatabaseConfig(
          { type: 'sqlite', path: ':memory:' },
          { poolSize: 1, connectionTimeoutMs: 1_000, statementTimeoutMs: 1_000 },
        ),
        { extensionMigrations: [AddUserNickname1700000000000] },
      ),
    ).initialize();
  });

  afterEach(async () => {
    await dataSource.destroy();
  });

  const applied = async (): Promise<string[]> =>
    (await dataSource.query<{ name: string }[]>('SELECT name FROM migrations ORDER BY id')).map(
      (row) => row.name,
    );

  it("should run the core's migrations first, then the extensions', whatever their dates", async () => {
    await runMigrations(dataSource);

    await expect(applied()).resolves.toEqual([
      ...MIGRATIONS.map((migration) => migration.name),
      'AddUserNickname1700000000000',
    ]);
  });

  it('should run nothing the second time', async () => {
    await runMigrations(dataSource);
    const first = await applied();

    await runMigrations(dataSource);

    await expect(applied()).resolves.toEqual(first);
  });
});
