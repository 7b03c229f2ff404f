import type { Pool, QueryResultRow } from 'pg';
import type { DataSource } from 'typeorm';
import { postgresPoolOf } from './driver-handle.js';
import type { RawRow } from './entity-rows.js';

/**
 * A named statement on PostgreSQL: parsed and planned once per pooled connection, then each run
 * is one round trip (Bind/Execute/Sync) with no query building in between. Runs on TypeORM's own
 * pool, so it shares the pool size and the statement and connection timeouts of the data source.
 * A single statement is a transaction by itself; anything longer goes through the UnitOfWork.
 */
export class NamedStatement {
  private pool: Pool | undefined;

  constructor(
    private readonly dataSource: DataSource,
    readonly name: string,
    readonly text: string,
  ) {}

  async rows(values: readonly unknown[]): Promise<RawRow[]> {
    const pool = (this.pool ??= postgresPoolOf(this.dataSource));
    const result = await pool.query<QueryResultRow>({
      name: this.name,
      text: this.text,
      values: [...values],
    });
    return result.rows;
  }

  async first(values: readonly unknown[]): Promise<RawRow | undefined> {
    return (await this.rows(values))[0];
  }
}
