import { Injectable } from '@nestjs/common';
import type { Database, Statement } from 'better-sqlite3';
import { In } from 'typeorm';
import { setBounded } from '../common/collections/bounded-map.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { UserAgent } from './entities/user-agent.entity.js';

/**
 * How many user agents' ids a process remembers on PostgreSQL. A deployment's clients send a few
 * dozen distinct texts; a client that sends a new text on every request only pushes older ones
 * out (the oldest remembered goes first), and costs what it cost before: a look-up in the statement.
 */
export const REMEMBERED_USER_AGENTS = 1_000;

/**
 * The queries on `user_agents`, on both engines; the only code that names the table. A user
 * agent's text is stored once; audit rows refer to it by id (decision 0028). Rows are only added.
 */
@Injectable()
export class UserAgentRepository {
  private sqliteFind: Statement<[string], { id: number }> | undefined;
  private sqliteAdd: Statement<[string], { id: number }> | undefined;

  /** PostgreSQL: ids of texts whose row a committed statement referred to (decision 0032). */
  private readonly remembered = new Map<string, number>();

  constructor(private readonly unitOfWork: UnitOfWork) {}

  /**
   * SQLite, inside the caller's synchronous unit: the id of `text`'s row, added if it is new.
   * Not remembered between calls: a row added in a unit that rolls back is gone with it.
   */
  idOnSqlite(db: Database, text: string | null): number | null {
    if (text === null) {
      return null;
    }
    this.sqliteFind ??= db.prepare('SELECT "id" FROM "user_agents" WHERE "userAgent" = ?');
    const found = this.sqliteFind.get(text);
    if (found !== undefined) {
      return found.id;
    }
    this.sqliteAdd ??= db.prepare(
      'INSERT INTO "user_agents" ("userAgent") VALUES (?) RETURNING "id"',
    );
    return this.sqliteAdd.get(text)!.id;
  }

  /**
   * PostgreSQL: an SQL expression for the id of the user agent in `parameter` (its text, or
   * NULL), added if new, for a statement that inserts an audit row in the same round trip. The
   * function (migration 1797000000100) looks first and adds only an unknown text.
   */
  postgresIdSql(parameter: string): string {
    return `keygate_user_agent_id(${parameter}::varchar)`;
  }

  /**
   * PostgreSQL: the id of `text`'s row, as remembered from a committed statement, or null (none
   * sent, or not remembered). Rows of `user_agents` are only ever added, never changed or
   * deleted, so an id that committed stays `text`'s for good.
   */
  rememberedIdOnPostgres(text: string | null): number | null {
    return text === null ? null : (this.remembered.get(text) ?? null);
  }

  /**
   * PostgreSQL: the SQL expression of the id of a user agent given as `idParameter` (its id as
   * rememberedIdOnPostgres gave it) or, when that is NULL, `textParameter` (its text, or NULL):
   * the function of postgresIdSql runs only for a text whose id is not remembered, and not at
   * all without a user agent (16 µs of the server's time per call even then, decision 0032).
   */
  postgresRememberedIdSql(idParameter: string, textParameter: string): string {
    return (
      `CASE WHEN ${idParameter}::integer IS NOT NULL THEN ${idParameter}::integer ` +
      `WHEN ${textParameter}::varchar IS NOT NULL THEN ${this.postgresIdSql(textParameter)} END`
    );
  }

  /**
   * PostgreSQL: remembers that `text`'s row is `id`. Call only once the statement that read or
   * added the row has committed: a row added by a statement that rolled back is gone with it.
   */
  rememberOnPostgres(text: string | null, id: number | null): void {
    if (text === null || id === null || this.remembered.has(text)) {
      return;
    }
    setBounded(this.remembered, text, id, REMEMBERED_USER_AGENTS);
  }

  /** The texts of the given ids, for readers of the trail. */
  async textsOf(ids: readonly number[]): Promise<ReadonlyMap<number, string>> {
    const wanted = [...new Set(ids)];
    if (wanted.length === 0) {
      return new Map();
    }
    const rows = await this.unitOfWork.run((m) => m.find(UserAgent, { where: { id: In(wanted) } }));
    return new Map(rows.map((row) => [row.id, row.userAgent]));
  }
}
