import { getMetadataArgsStorage, PrimaryColumn, type QueryRunner } from 'typeorm';

/** Timestamps are `datetime` text (UTC) on SQLite and `timestamptz` on PostgreSQL. */
export function timestampType(queryRunner: QueryRunner): string {
  return queryRunner.connection.options.type === 'postgres'
    ? 'timestamp with time zone'
    : 'datetime';
}

/** The columns declared with BinaryPrimaryColumn: their class and property. */
const binaryColumns: { readonly target: object; readonly propertyName: string }[] = [];

/**
 * A primary key of bytes: `blob` on SQLite, `bytea` on PostgreSQL. TypeORM has no type name both
 * engines accept, so the column is declared as `blob` and useBinaryColumnsOf() gives it the
 * engine's type when a data source's options are built, before the data source reads its
 * metadata (test/schema.e2e-spec.ts holds the result to the migrations on both engines).
 */
export function BinaryPrimaryColumn(): PropertyDecorator {
  return (object, propertyName) => {
    PrimaryColumn({ type: 'blob' })(object, propertyName);
    binaryColumns.push({ target: object.constructor, propertyName: String(propertyName) });
  };
}

/** Gives the columns declared with BinaryPrimaryColumn the type of `engine`. */
export function useBinaryColumnsOf(engine: 'postgres' | 'better-sqlite3'): void {
  const type = engine === 'postgres' ? 'bytea' : 'blob';
  for (const args of getMetadataArgsStorage().columns) {
    if (
      binaryColumns.some((c) => c.target === args.target && c.propertyName === args.propertyName)
    ) {
      args.options.type = type;
    }
  }
}
