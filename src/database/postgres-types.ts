import type { DataSource, EntityMetadata } from 'typeorm';

type ColumnMetadata = EntityMetadata['columns'][number];

/**
 * The PostgreSQL type to cast a parameter to for `column` (an `INSERT … SELECT` cannot infer it
 * from the target column). TypeORM's own name for a `Date` column is `timestamp without time
 * zone`, while the migrations make every instant `timestamptz` (column-types.ts): a value cast
 * to the former loses its offset and is then read in the session's time zone, so an instant
 * would move when the database session is not in UTC. Instants are cast to `timestamptz`.
 */
export function postgresTypeOf(dataSource: DataSource, column: ColumnMetadata): string {
  const type = dataSource.driver.normalizeType(column);
  return type === 'timestamp without time zone' ? 'timestamp with time zone' : type;
}

/**
 * `$first::type, ...`: one typed parameter per column, in order, for an `INSERT … SELECT`, where
 * PostgreSQL cannot infer a parameter's type from the target column.
 */
export function typedParameters(
  dataSource: DataSource,
  columns: readonly ColumnMetadata[],
  first: number,
): string[] {
  return columns.map((column, i) => `$${first + i}::${postgresTypeOf(dataSource, column)}`);
}
