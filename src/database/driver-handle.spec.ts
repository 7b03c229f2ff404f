import type { DataSource } from 'typeorm';
import { createInMemoryDataSource } from '../../test/utils/in-memory-database.js';
import { sqliteConnectionOf } from './driver-handle.js';

// The hot paths run prepared statements on the connection TypeORM holds, read from a property
// outside TypeORM's documented API. If an upgrade moves it, this fails here, by name.

describe(sqliteConnectionOf.name, () => {
  let dataSource: DataSource;

  beforeEach(async () => {
    dataSource = await createInMemoryDataSource();
  });

  afterEach(async () => {
    await dataSource.destroy();
  });

  it("should return the connection TypeORM's own queries run on", async () => {
    const sut = sqliteConnectionOf(dataSource);

    // An in-memory database exists only on its own connection: a table TypeORM creates is
    // visible through the handle only if the handle is that connection.
    await dataSource.query('CREATE TABLE handle_probe (value TEXT)');
    await dataSource.query("INSERT INTO handle_probe (value) VALUES ('typeorm')");
    sut.prepare("INSERT INTO handle_probe (value) VALUES ('handle')").run();

    expect(sut.prepare('SELECT value FROM handle_probe ORDER BY rowid').pluck().all()).toEqual([
      'typeorm',
      'handle',
    ]);
    await expect(dataSource.query('SELECT count(*) AS n FROM handle_probe')).resolves.toEqual([
      { n: 2 },
    ]);
  });

  it('should refuse, naming the property, when TypeORM keeps no such connection there', () => {
    const moved = { options: dataSource.options, driver: {} } as unknown as DataSource;

    expect(() => sqliteConnectionOf(moved)).toThrow(
      'TypeORM no longer keeps the better-sqlite3 connection at driver.databaseConnection ' +
        '(see src/database/driver-handle.ts)',
    );
  });

  it('should refuse a data source on another engine', () => {
    const postgres = { options: { type: 'postgres' }, driver: {} } as unknown as DataSource;

    expect(() => sqliteConnectionOf(postgres)).toThrow(
      'A SQLite connection was asked of a postgres data source',
    );
  });
});
