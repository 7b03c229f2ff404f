import pg, {
  type Connection as PgConnection,
  type FieldDef,
  type Pool,
  type QueryResultRow,
  type Submittable,
} from 'pg';
import type { DataSource } from 'typeorm';
import { postgresPoolOf } from './driver-handle.js';
import type { RawRow } from './entity-rows.js';

/** How a statement's result rows read: each column's name and its text parser. */
interface RowShape {
  readonly names: readonly string[];
  readonly parsers: readonly ((text: string) => unknown)[];
}

/**
 * A named statement on PostgreSQL: parsed and planned once per pooled connection, then each run
 * is one round trip with no query building in between. Runs on TypeORM's own pool, so it shares
 * the pool size and the statement and connection timeouts of the data source. A single
 * statement is a transaction by itself; anything longer goes through the UnitOfWork.
 *
 * Its rows are described once: the first run goes through `pg`'s own query, whose Describe
 * message returns the columns' names and types, and every later run sends Bind/Execute/Sync
 * only and reads its rows with the parsers built from that first description (see Execution).
 * `pg` would have PostgreSQL describe the portal on every run and rebuild the parsers from the
 * description each time: on `GET /me`, the account read of every protected request, that was
 * work on both sides with nothing new to learn. The columns of a statement's text do not change
 * while the service runs (migrations run before it serves; a schema change under a running
 * process fails its named statements in any case, "cached plan must not change result type").
 */
export class NamedStatement {
  private pool: Pool | undefined;
  private shape: RowShape | undefined;

  constructor(
    private readonly dataSource: DataSource,
    readonly name: string,
    readonly text: string,
  ) {}

  async rows(values: readonly unknown[]): Promise<RawRow[]> {
    const pool = (this.pool ??= postgresPoolOf(this.dataSource));
    if (this.shape === undefined) {
      const result = await pool.query<QueryResultRow>({
        name: this.name,
        text: this.text,
        values: [...values],
      });
      this.shape ??= shapeOf(result.fields);
      return result.rows;
    }
    const client = await pool.connect();
    // As pool.query does: while the client is out of the pool, an error its connection emits (a
    // backend terminated under it) fails this execution. Without a listener, the 'error' event
    // would end the process.
    let onError: ((error: Error) => void) | undefined;
    let rows: RawRow[];
    try {
      rows = await new Promise<RawRow[]>((resolve, reject) => {
        onError = reject;
        client.once('error', onError);
        const execution = new Execution(this.name, this.text, [...values], this.shape!);
        execution.callback = (error, result) => (error === null ? resolve(result) : reject(error));
        void client.query(execution);
      });
    } catch (error: unknown) {
      client.removeListener('error', onError!);
      // As pool.query does: a client whose query failed is not given to anyone else.
      client.release(error instanceof Error ? error : true);
      throw error;
    }
    client.removeListener('error', onError!);
    client.release();
    return rows;
  }

  async first(values: readonly unknown[]): Promise<RawRow | undefined> {
    return (await this.rows(values))[0];
  }
}

/**
 * `pg`'s conversion of a parameter to its wire form (dates, buffers, arrays, JSON), the one its
 * own queries bind with; exported by pg 8 as `utils`, which @types/pg does not declare. Checked
 * when the module loads, so an upgrade that moves it fails at start, not on a request.
 */
const prepareValue = ((): ((value: unknown) => unknown) => {
  const utils = (pg as unknown as { utils?: { prepareValue?: unknown } }).utils;
  if (typeof utils?.prepareValue !== 'function') {
    throw new Error(
      'pg no longer exports utils.prepareValue (see src/database/postgres-statements.ts)',
    );
  }
  return utils.prepareValue as (value: unknown) => unknown;
})();

function shapeOf(fields: readonly FieldDef[]): RowShape {
  return {
    names: fields.map((field) => field.name),
    // The pool's clients ask for text results (pg's default), as every run after the first does.
    parsers: fields.map(
      (field) => pg.types.getTypeParser(field.dataTypeID, 'text') as (text: string) => unknown,
    ),
  };
}

/**
 * The part of `pg`'s connection a submitted query writes to, as pg 8 has it (what pg-cursor uses
 * too); @types/pg still declares the older signatures and not `parsedStatements`.
 */
interface Connection {
  readonly parsedStatements: Record<string, string | undefined>;
  readonly stream: { cork?: () => void; uncork?: () => void };
  parse(query: { text: string; name: string; types: unknown[] }): void;
  bind(config: {
    statement: string;
    values: unknown[];
    valueMapper: (value: unknown) => unknown;
  }): void;
  execute(config: { portal: string; rows: number }): void;
  sync(): void;
}

/**
 * One run of a described named statement, as a `pg` Submittable (`client.query(submittable)`,
 * the interface pg-cursor and pg-query-stream implement): Parse only on a connection that has
 * not parsed the statement yet, then Bind, Execute and Sync, no Describe. `pg` calls the
 * handle* methods as the answer's messages arrive, and handleReadyForQuery last.
 */
class Execution implements Submittable {
  /**
   * Called once, with the rows or the first error. `pg` wraps it when the pool has a
   * `query_timeout` (the data source sets one): the wrapper clears that timer, so it must be
   * called on every outcome, as pg's own Query calls it.
   */
  callback: ((error: Error | null, rows: RawRow[]) => void) | undefined;
  private readonly rows: RawRow[] = [];
  private settled = false;

  constructor(
    /** `pg` records a parsed statement under the active query's name and text. */
    readonly name: string,
    readonly text: string,
    /** Public under pg's name for them, so whatever inspects the queries a client runs sees them. */
    readonly values: unknown[],
    private readonly shape: RowShape,
  ) {}

  /** An error returned (as pg's Query does) is handed back to handleError by the client. */
  submit(pgConnection: PgConnection): Error | undefined {
    const connection = pgConnection as unknown as Connection;
    const parsed = connection.parsedStatements[this.name];
    if (parsed !== undefined && parsed !== this.text) {
      return new Error(`Prepared statements must be unique - '${this.name}' differs`);
    }
    // One write for the whole run, as pg's own Query does.
    connection.stream.cork?.();
    try {
      if (parsed === undefined) {
        connection.parse({ text: this.text, name: this.name, types: [] });
      }
      connection.bind({
        statement: this.name,
        values: this.values,
        valueMapper: prepareValue,
      });
      connection.execute({ portal: '', rows: 0 });
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return undefined;
  }

  handleDataRow(message: { fields: (string | null)[] }): void {
    const { names, parsers } = this.shape;
    const row: Record<string, unknown> = {};
    const { fields } = message;
    for (let i = 0; i < fields.length; i += 1) {
      const text = fields[i];
      row[names[i]] = text === null ? null : parsers[i](text);
    }
    this.rows.push(row);
  }

  handleRowDescription(): void {}

  handleCommandComplete(): void {}

  handleEmptyQuery(): void {}

  handlePortalSuspended(): void {}

  handleCopyInResponse(): void {}

  handleCopyData(): void {}

  /** An ErrorResponse, or the client's own failure; ReadyForQuery may still follow. */
  handleError(error: Error): void {
    this.settle(error, []);
  }

  handleReadyForQuery(): void {
    this.settle(null, this.rows);
  }

  private settle(error: Error | null, rows: RawRow[]): void {
    if (!this.settled) {
      this.settled = true;
      this.callback?.(error, rows);
    }
  }
}
