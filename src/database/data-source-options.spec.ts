import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from './data-source-options.js';
import { buildDatabaseConfig } from '../../test/factories/database-config.factory.js';

describe(dataSourceOptions.name, () => {
  let directory: string;
  let dataSource: DataSource | undefined;

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'keygate-options-'));
  });

  afterEach(async () => {
    await dataSource?.destroy();
    rmSync(directory, { recursive: true, force: true });
  });

  it('should size the SQLite page cache and memory mapping as configured', async () => {
    dataSource = await new DataSource(
      dataSourceOptions(
        buildDatabaseConfig(
          { type: 'sqlite', path: join(directory, 'keygate.db') },
          {
            poolSize: 1,
            connectionTimeoutMs: 1_000,
            statementTimeoutMs: 1_000,
            sqliteCacheSizeMb: 32,
            sqliteMmapSizeMb: 8,
          },
        ),
      ),
    ).initialize();

    const pragmas = {
      cache: (await dataSource.query<{ cache_size: number }[]>('PRAGMA cache_size'))[0],
      mmap: (await dataSource.query<{ mmap_size: number }[]>('PRAGMA mmap_size'))[0],
      journal: (await dataSource.query<{ journal_mode: string }[]>('PRAGMA journal_mode'))[0],
    };

    expect(pragmas).toEqual({
      cache: { cache_size: -32 * 1024 },
      mmap: { mmap_size: 8 * 1024 * 1024 },
      journal: { journal_mode: 'wal' },
    });
  });
});
