import { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';

/**
 * The column type of a byte string on both engines: `blob` on SQLite, `bytea` on PostgreSQL.
 * TypeORM has no type name both drivers accept for bytes, and an entity's column type is fixed
 * when its class is declared, before the engine is known; so an entity declares `blob` and the
 * PostgreSQL driver reads it as `bytea` (for its type check, its schema comparison and its DDL).
 * Values are Buffers on both engines (better-sqlite3 and `pg` both read and write them as such).
 */
export const BINARY_COLUMN_TYPE = 'blob';

type NormalizeType = (
  this: PostgresDriver,
  column: Parameters<PostgresDriver['normalizeType']>[0],
) => string;

const prototype = PostgresDriver.prototype as unknown as {
  normalizeType: NormalizeType & { keygateBinary?: true };
};
const normalize = prototype.normalizeType;
if (normalize.keygateBinary !== true) {
  prototype.normalizeType = Object.assign(
    function (this: PostgresDriver, column: Parameters<NormalizeType>[0]): string {
      return column.type === BINARY_COLUMN_TYPE ? 'bytea' : normalize.call(this, column);
    },
    { keygateBinary: true as const },
  );
}
