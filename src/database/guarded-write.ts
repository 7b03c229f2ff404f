import type { EntityManager } from 'typeorm';

/**
 * A write on one table that another repository's statement is made conditional on (decision
 * 0034): the repository that owns the table gives it, the one that composes the statement uses
 * it without knowing its table. On PostgreSQL it is one data-modifying CTE, `sql(first)` with its
 * parameters numbered from `$first` and given by `values`, that returns a row if it wrote and none
 * if its condition failed; the composed statement's other writes run only for that row. Inside a
 * transaction of the unit of work (SQLite, or a flow with more to write than fragments cover) it
 * is `within`, with the same condition.
 */
export interface GuardedWrite {
  /** Names the statement it is composed into (one named statement per kind of write). */
  readonly kind: string;
  /**
   * The CTE's body; a row (any columns) when it wrote, none when it did not. `when` is an SQL
   * condition the write also requires (a Precondition's, or `TRUE`).
   */
  sql(first: number, when: string): string;
  readonly values: readonly unknown[];
  /** The same write inside the caller's transaction; false when its condition failed. */
  within(manager: EntityManager): Promise<boolean>;
  /**
   * The error to answer for a database error that `sql` caused (a unique violation on the
   * table's own key, say), or the error itself.
   */
  translate(error: unknown): unknown;
}

/**
 * A condition on one table that another repository's statement requires before it writes (the
 * login's "no second factor to ask for", decision 0034), given by the repository that owns the
 * table. On PostgreSQL `sql(first)` is a boolean SQL expression, its parameters from `$first`
 * given by `values`, read in the statement's snapshot; inside a transaction it is `holds`.
 */
export interface Precondition {
  /** Names the statement it is composed into, with the write's kind. */
  readonly kind: string;
  sql(first: number): string;
  readonly values: readonly unknown[];
  holds(manager: EntityManager): Promise<boolean>;
}
