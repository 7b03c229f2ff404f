import type { DataSource, EntityMetadata, EntityTarget } from 'typeorm';

type ColumnMetadata = EntityMetadata['columns'][number];

/** A row as a driver returns it: column names to raw values. */
export type RawRow = Readonly<Record<string, unknown>>;

type Convert = (value: unknown) => unknown;

/** One column with its conversions, chosen once. */
interface ColumnCodec {
  readonly metadata: ColumnMetadata;
  readonly property: string;
  readonly name: string;
  readonly persist: Convert;
  readonly hydrate: Convert;
}

/** TypeORM's datetime text on SQLite: `YYYY-MM-DD HH:MM:SS.SSS`, in UTC. */
const SQLITE_DATETIME = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/;

/**
 * One table's columns as TypeORM's metadata declares them, for the statements a repository writes
 * by hand on a hot path (better-sqlite3 prepared statements, `pg` named statements). The column
 * lists, the order of an insert's values and the conversions to and from the driver's values all
 * come from the entity, so a column added to an entity (and its migration) is in every fast path
 * at once. Values are converted as TypeORM's own driver converts them: through the driver itself,
 * except for the plain column types the entities use, whose conversions are spelled out here
 * because the driver's generic ones cost more than the rest of a refresh's mapping
 * (entity-rows.spec.ts and the repositories' tests hold both to what TypeORM reads and writes).
 */
export class EntityRows<T extends object> {
  /** Every column of the table, in the entity's order. */
  readonly columns: readonly ColumnMetadata[];
  readonly table: string;
  private readonly codecs: readonly ColumnCodec[];
  private readonly create: () => T;

  /**
   * `only`: the properties of a statement that reads some columns only (a listing); their
   * columns, in the entity's order, are then all the others know of.
   */
  constructor(
    dataSource: DataSource,
    target: EntityTarget<T>,
    only?: readonly (keyof T & string)[],
  ) {
    const metadata = dataSource.getMetadata(target);
    this.columns = metadata.columns.filter(
      (column) =>
        !column.isVirtual &&
        (only === undefined || only.includes(column.propertyName as keyof T & string)),
    );
    if (only !== undefined && this.columns.length !== only.length) {
      throw new Error(`${metadata.tableName} has no column for one of ${only.join(', ')}`);
    }
    this.table = metadata.tableName;
    const sqlite = dataSource.options.type === 'better-sqlite3';
    const { driver } = dataSource;
    this.codecs = this.columns.map((column) => ({
      metadata: column,
      property: column.propertyName,
      name: column.databaseName,
      ...codecFor(column, sqlite, {
        persist: (value) => driver.preparePersistentValue(value, column) as unknown,
        hydrate: (value) => driver.prepareHydratedValue(value, column) as unknown,
      }),
    }));
    const flat = this.columns.every((column) => column.embeddedMetadata === undefined);
    const Target = metadata.target;
    this.create =
      flat && typeof Target === 'function'
        ? () => new (Target as new () => T)()
        : () => metadata.create() as T;
  }

  /** The column names, as SQL: `"id", "email", ...`; with `alias`, each qualified by it. */
  names(alias?: string): string {
    const prefix = alias === undefined ? '' : `${alias}.`;
    return this.columns.map((column) => `${prefix}"${column.databaseName}"`).join(', ');
  }

  /**
   * The columns for a select that reads this table beside another: `alias."id" AS "prefix_id"`,
   * so that hydrate(row, prefix) can tell them apart.
   */
  aliased(alias: string, prefix: string): string {
    return this.columns
      .map((column) => `${alias}."${column.databaseName}" AS "${prefix}${column.databaseName}"`)
      .join(', ');
  }

  /** One placeholder per column: `?, ?, ...` for better-sqlite3, `$first, ...` for `pg`. */
  placeholders(style: 'sqlite' | 'postgres', first = 1): string {
    return this.columns
      .map((_column, i) => (style === 'sqlite' ? '?' : `$${first + i}`))
      .join(', ');
  }

  /** The driver's values of `entity`, in the order of `columns`, as TypeORM would write them. */
  values(entity: Readonly<T>): unknown[] {
    const source = entity as Readonly<Record<string, unknown>>;
    return this.codecs.map((codec) => codec.persist(source[codec.property]));
  }

  /** The entity TypeORM would hydrate from `row`; `prefix` as given to aliased(). */
  hydrate(row: RawRow, prefix = ''): T {
    const entity = this.create();
    const target = entity as Record<string, unknown>;
    for (const codec of this.codecs) {
      target[codec.property] = codec.hydrate(row[prefix + codec.name]);
    }
    return entity;
  }

  column(propertyName: string): ColumnMetadata {
    const found = this.columns.find((column) => column.propertyName === propertyName);
    if (found === undefined) {
      throw new Error(`${this.table} has no column for ${propertyName}`);
    }
    return found;
  }
}

/**
 * The conversions of one column: the driver's (`general`), or, for a plain column of the types
 * the entities use, the same conversions written out. Anything else (a transformer, an embedded
 * column, a JSON column) keeps the driver's.
 */
function codecFor(
  column: ColumnMetadata,
  sqlite: boolean,
  general: { readonly persist: Convert; readonly hydrate: Convert },
): { readonly persist: Convert; readonly hydrate: Convert } {
  if (column.transformer !== undefined || column.embeddedMetadata !== undefined) {
    return general;
  }
  const { type } = column;
  if (type === String || type === 'varchar' || type === 'character varying') {
    return { persist: identity, hydrate: identity };
  }
  if (!sqlite) {
    // `pg` parses timestamptz, boolean and integer columns into Date, boolean and number, and
    // TypeORM's PostgreSQL driver passes those through.
    return type === Date || type === Boolean || type === Number || type === 'integer'
      ? {
          persist: (value) =>
            value instanceof Date || typeof value !== 'object' ? value : general.persist(value),
          hydrate: identity,
        }
      : general;
  }
  if (type === Date || type === 'datetime') {
    return {
      persist: (value) =>
        value instanceof Date
          ? value.toISOString().replace('T', ' ').slice(0, 23)
          : general.persist(value),
      hydrate: (value) =>
        typeof value === 'string' && SQLITE_DATETIME.test(value)
          ? new Date(`${value.replace(' ', 'T')}Z`)
          : general.hydrate(value),
    };
  }
  if (type === Boolean || type === 'boolean') {
    return {
      persist: (value) => (typeof value === 'boolean' ? (value ? 1 : 0) : general.persist(value)),
      hydrate: (value) => (value === null || value === undefined ? value : Boolean(value)),
    };
  }
  if (type === Number || type === 'integer') {
    return {
      persist: identity,
      hydrate: (value) => (Number.isInteger(value) ? value : general.hydrate(value)),
    };
  }
  return general;
}

function identity(value: unknown): unknown {
  return value;
}
