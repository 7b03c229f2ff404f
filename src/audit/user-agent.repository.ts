import { Injectable } from '@nestjs/common';
import type { Database, Statement } from 'better-sqlite3';
import { In } from 'typeorm';
import { UnitOfWork } from '../database/unit-of-work.js';
import { UserAgent } from './entities/user-agent.entity.js';

/**
 * The queries on `user_agents`, on both engines; the only code that names the table. A user
 * agent's text is stored once; audit rows refer to it by id (decision 0028). Rows are only added.
 */
@Injectable()
export class UserAgentRepository {
  private sqliteFind: Statement<[string], { id: number }> | undefined;
  private sqliteAdd: Statement<[string], { id: number }> | undefined;

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
