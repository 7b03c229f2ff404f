import type { DataSource, EntityMetadata, EntityTarget } from 'typeorm';

type ColumnMetadata = EntityMetadata['columns'][number];

/** A row as a driver returns it: column names to raw values. */
export type RawRow = Readonly<Record<string, unknown>>;

/**
 * One table's columns as TypeORM's metadata declares them, for the statements a repository writes
 * by hand on a hot path (better-sqlite3 prepared statements, `pg` named statements). The column
 * lists, the order of an insert's values and the conversions to and from the driver's values all
 * come from the entity, through TypeORM's own driver, so a column added to an entity (and its
 * migration) is in every fast path at once and is read and written exactly as TypeORM would.
 */
export class EntityRows<T extends object> {
  /** Every column of the table, in the entity's order. */
  readonly columns: readonly ColumnMetadata[];
  readonly table: string;
  private readonly create: () => T;
  private readonly persist: (value: unknown, column: ColumnMetadata) => unknown;
  private readonly hydrateValue: (value: unknown, column: ColumnMetadata) => unknown;

  constructor(dataSource: DataSource, target: EntityTarget<T>) {
    const metadata = dataSource.getMetadata(target);
    const { driver } = dataSource;
    this.columns = metadata.columns.filter((column) => !column.isVirtual);
    this.table = metadata.tableName;
    this.create = () => metadata.create() as T;
    this.persist = (value, column) => driver.preparePersistentValue(value, column) as unknown;
    this.hydrateValue = (value, column) => driver.prepareHydratedValue(value, column) as unknown;
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

  /** `count` placeholders: `?, ?, ...` for better-sqlite3, `$first, ...` for `pg`. */
  placeholders(style: 'sqlite' | 'postgres', first = 1): string {
    return this.columns
      .map((_column, i) => (style === 'sqlite' ? '?' : `$${first + i}`))
      .join(', ');
  }

  /** The driver's values of `entity`, in the order of `columns`, as TypeORM would write them. */
  values(entity: Readonly<T>): unknown[] {
    return this.columns.map((column) => this.persist(column.getEntityValue(entity), column));
  }

  /** The driver's value of one column of `entity`. */
  value(entity: Readonly<T>, propertyName: keyof T & string): unknown {
    return this.persist(entity[propertyName], this.column(propertyName));
  }

  /** The entity TypeORM would hydrate from `row`; `prefix` as given to aliased(). */
  hydrate(row: RawRow, prefix = ''): T {
    const entity = this.create();
    for (const column of this.columns) {
      column.setEntityValue(entity, this.hydrateValue(row[prefix + column.databaseName], column));
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
