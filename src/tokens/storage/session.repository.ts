import { Injectable } from '@nestjs/common';
import type { Database, Statement } from 'better-sqlite3';
import { DataSource, IsNull, type EntityManager } from 'typeorm';
import { EntityRows, type RawRow } from '../../database/entity-rows.js';
import { NamedStatement } from '../../database/postgres-statements.js';
import { typedParameters } from '../../database/postgres-types.js';
import { toSqliteDatetime } from '../../database/sqlite-datetime.js';
import { UnitOfWork } from '../../database/unit-of-work.js';
import { LISTED_SESSION_COLUMNS, Session, type ListedSession } from '../entities/session.entity.js';

/** How a session ends: when, from where, why. */
export interface SessionEnding {
  readonly at: Date;
  readonly ip: string;
  readonly reason: string;
}

/** What a rotation moves in place: the newest token's creation and expiry. */
export interface SessionUse {
  readonly at: Date;
  readonly ip: string;
  readonly userAgent: string | null;
  readonly expiresAt: Date;
}

/** A session the cleanup picked: what it needs to decide. */
export interface SessionToClean {
  readonly id: string;
  readonly generation: number;
  /** The session expired before the cleanup's cutoff: it goes, with its tokens. */
  readonly gone: boolean;
}

/**
 * The queries on `sessions`, on both engines; the only code that names the table. The rotation,
 * which moves a session and inserts a token in one statement on PostgreSQL (one synchronous unit
 * on SQLite), is RefreshTokenRepository's: this repository gives it its fragments (selectSql,
 * advanceSql, advanceValues, and their SQLite statements), built from the entity metadata.
 */
@Injectable()
export class SessionRepository {
  private readonly rows: EntityRows<Session>;
  private readonly listed: EntityRows<Session>;
  private sqlite: SqliteStatements | undefined;
  private postgresById: NamedStatement | undefined;
  private postgresActive: NamedStatement | undefined;

  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly dataSource: DataSource,
  ) {
    this.rows = new EntityRows(dataSource, Session);
    this.listed = new EntityRows(dataSource, Session, LISTED_SESSION_COLUMNS);
  }

  /** The session's columns aliased for a statement that reads it beside other tables. */
  aliased(alias: string, prefix: string): string {
    return this.rows.aliased(alias, prefix);
  }

  /** The session hydrate() reads from a row of aliased(…, prefix); null when none was found. */
  hydrate(row: RawRow, prefix: string): Session | null {
    return row[`${prefix}id`] === null || row[`${prefix}id`] === undefined
      ? null
      : this.rows.hydrate(row, prefix);
  }

  /** The driver's value of an instant, as the session's columns take it (as TypeORM writes it). */
  instant(at: Date): unknown {
    return this.unitOfWork.isSerialized ? toSqliteDatetime(at) : at;
  }

  /** `SELECT` of the session whose id is the SQL expression `id`, every column. */
  selectSql(id: string): string {
    return `SELECT ${this.rows.names()} FROM "${this.rows.table}" WHERE "id" = ${id}`;
  }

  /**
   * PostgreSQL: the `UPDATE` that moves the session `id` to the generation after `generation`
   * (SQL expressions over `from`), only if it is still at `generation`, has neither ended nor
   * expired at `$first`, and `also` holds: the rotation's compare-and-set. Under READ COMMITTED
   * an update that meets a row another transaction changed re-checks these conditions on the
   * committed row, so of concurrent rotations of one generation exactly one matches, across
   * instances. Returns the session's id, new generation and user. Parameters from `$first`:
   * advanceValues().
   */
  advanceSql(
    first: number,
    on: {
      readonly from: string;
      readonly id: string;
      readonly generation: string;
      readonly also: string;
    },
  ): string {
    const [at, ip, userAgent, expiresAt] = [first, first + 1, first + 2, first + 3].map(
      (n) => `$${n}`,
    );
    return (
      `UPDATE "${this.rows.table}" s SET "generation" = s."generation" + 1, ` +
      `"lastUsedAt" = ${at}, "lastIp" = ${ip}, "lastUserAgent" = ${userAgent}, ` +
      `"expiresAt" = ${expiresAt} FROM ${on.from} WHERE s."id" = ${on.id} ` +
      `AND s."generation" = ${on.generation} AND s."endedAt" IS NULL AND s."expiresAt" > ${at} ` +
      `AND ${on.also} RETURNING s."id", s."generation", s."userId"`
    );
  }

  /**
   * PostgreSQL: the `UPDATE` that ends the session `id` (an SQL expression over `from`) if it has
   * not ended yet and `also` holds, with the ending in `$first` to `$first + 2` (endValues). Under
   * READ COMMITTED an update that meets a row a concurrent rotation changed re-checks `endedAt` on
   * the committed row, so the session ends whichever generation it reached. Returns the session's
   * id and its (current) generation.
   */
  endSql(
    first: number,
    on: { readonly from: string; readonly id: string; readonly also: string },
  ): string {
    return (
      `UPDATE "${this.rows.table}" s SET "endedAt" = $${first}, "endedByIp" = $${first + 1}, ` +
      `"endReason" = $${first + 2} FROM ${on.from} WHERE s."id" = ${on.id} ` +
      `AND s."endedAt" IS NULL AND ${on.also} RETURNING s."id", s."generation"`
    );
  }

  /** The parameters of endSql (and endOverLimitSql's ending), in order. */
  endValues(ending: SessionEnding): unknown[] {
    return [this.instant(ending.at), ending.ip, ending.reason];
  }

  /**
   * PostgreSQL: the `UPDATE` that ends the active sessions of the user `$first + 3` past the
   * `$first + 5` most recently used ones at `$first + 4`, with endValues' ending in `$first` to
   * `$first + 2`, only if `when` (an SQL condition) holds. For a statement that also inserts a
   * session: that one is not visible to the statement's own reads, so the caller passes the limit
   * less one, its new session counting as the most recently used. The caller makes the session
   * starts of one account take turns, so the statement's snapshot holds every other one. Returns
   * the ended sessions' ids.
   */
  endOverLimitSql(first: number, when: string): string {
    const [at, ip, reason, userId, now, keep] = [0, 1, 2, 3, 4, 5].map((i) => `$${first + i}`);
    const table = `"${this.rows.table}"`;
    return (
      `UPDATE ${table} SET "endedAt" = ${at}, "endedByIp" = ${ip}, "endReason" = ${reason} ` +
      `WHERE "endedAt" IS NULL AND (${when}) AND "id" IN (SELECT "id" FROM ${table} ` +
      `WHERE "userId" = ${userId} AND "endedAt" IS NULL AND "expiresAt" > ${now} ` +
      'ORDER BY "lastUsedAt" DESC, "startedAt" DESC, "id" ASC ' +
      `LIMIT 100 OFFSET ${keep}) RETURNING "id"`
    );
  }

  /** The parameters of endOverLimitSql, in order. */
  endOverLimitValues(userId: string, keep: number, ending: SessionEnding): unknown[] {
    return [...this.endValues(ending), userId, this.instant(ending.at), keep];
  }

  /** The parameters of advanceSql, in order. */
  advanceValues(use: SessionUse): unknown[] {
    return [this.instant(use.at), use.ip, use.userAgent, this.instant(use.expiresAt)];
  }

  /** SQLite: the session `id`, read inside a synchronous unit. */
  findOnSqlite(db: Database, id: string): Session | null {
    const row = this.sqliteStatements(db).byId.get(id);
    return row === undefined ? null : this.rows.hydrate(row);
  }

  /** SQLite: advanceSql's compare-and-set inside a synchronous unit; false when it did not match. */
  advanceOnSqlite(db: Database, id: string, generation: number, use: SessionUse): boolean {
    const [at, ip, userAgent, expiresAt] = this.advanceValues(use);
    return (
      this.sqliteStatements(db).advance.run(at, ip, userAgent, expiresAt, id, generation, at)
        .changes === 1
    );
  }

  /** advanceSql's compare-and-set inside the caller's transaction (the careful path). */
  async advanceWithin(
    manager: EntityManager,
    id: string,
    generation: number,
    use: SessionUse,
  ): Promise<boolean> {
    const result = await manager
      .createQueryBuilder()
      .update(Session)
      .set({
        generation: () => '"generation" + 1',
        lastUsedAt: use.at,
        lastIp: use.ip,
        lastUserAgent: use.userAgent,
        expiresAt: use.expiresAt,
      })
      .where('"id" = :id AND "generation" = :generation AND "endedAt" IS NULL', { id, generation })
      .andWhere('"expiresAt" > :at', { at: use.at })
      .execute();
    return result.affected === 1;
  }

  /**
   * The session `id`, or null. On every protected request when Jwt__RequireActiveSession is on,
   * so a primary-key read: a prepared statement on SQLite, a named statement on PostgreSQL.
   */
  async findById(id: string): Promise<Session | null> {
    const row = this.unitOfWork.isSerialized
      ? await this.unitOfWork.runOnSqlite((db) => this.sqliteStatements(db).byId.get(id))
      : await (this.postgresById ??= new NamedStatement(
          this.dataSource,
          'sessions_by_id',
          this.selectSql('$1'),
        )).first([id]);
    return row === undefined ? null : this.rows.hydrate(row);
  }

  /**
   * The session `id` inside the caller's transaction; on PostgreSQL its row stays locked until
   * the transaction ends, so the careful path's decision and its write see one state.
   */
  async findForUpdate(manager: EntityManager, id: string): Promise<Session | null> {
    if (this.unitOfWork.isSerialized) {
      return manager.findOneBy(Session, { id });
    }
    const rows = await manager.query<RawRow[]>(`${this.selectSql('$1')} FOR UPDATE`, [id]);
    return rows.length === 0 ? null : this.rows.hydrate(rows[0]);
  }

  /**
   * The active sessions of `userId`, most recently used first (ties: the newer session, then the
   * id, so the order is stable): a read through IDX_sessions_userId of the listed columns only,
   * a prepared statement on SQLite and a named statement on PostgreSQL, mapped without TypeORM's
   * per-row work, because a user may hold a thousand sessions (Sessions__MaxActivePerUser).
   */
  async activeOf(userId: string, now: Date): Promise<ListedSession[]> {
    const at = this.instant(now);
    const rows = this.unitOfWork.isSerialized
      ? await this.unitOfWork.runOnSqlite((db) => this.sqliteStatements(db).active.all(userId, at))
      : await (this.postgresActive ??= new NamedStatement(
          this.dataSource,
          'sessions_active_of',
          activeOfSql(this.listed, 'postgres'),
        )).rows([userId, at]);
    return rows.map((row) => this.listed.hydrate(row));
  }

  /** For a statement that starts a session (PostgreSQL): `INSERT … SELECT` of typed parameters. */
  insertSelectSql(first: number): string {
    const values = typedParameters(this.dataSource, this.rows.columns, first);
    return `INSERT INTO "${this.rows.table}" (${this.rows.names()}) SELECT ${values.join(', ')}`;
  }

  /** How many parameters insertSelectSql takes: one per column. */
  get columnCount(): number {
    return this.rows.columns.length;
  }

  /** The parameters of insertSelectSql for `session`, in order. */
  values(session: Session): unknown[] {
    return this.rows.values(session);
  }

  /** Inserts `session` inside the caller's transaction. */
  async insertWithin(manager: EntityManager, session: Session): Promise<void> {
    await manager.insert(Session, session);
  }

  /**
   * Ends the session `id` if it has not ended yet (expired or not), inside the caller's
   * transaction; false when it already had. One statement.
   */
  async endIfOngoing(manager: EntityManager, id: string, ending: SessionEnding): Promise<boolean> {
    const result = await manager.update(Session, { id, endedAt: IsNull() }, endedColumns(ending));
    return result.affected === 1;
  }

  /**
   * Ends the sessions of `userId` past its `limit` active ones, least recently used first, inside
   * the caller's transaction; returns their ids. The caller makes the starts of one account take
   * turns (PostgreSQL: the lock its insert takes), so at most one is over the limit.
   */
  async endOverLimit(
    manager: EntityManager,
    userId: string,
    limit: number,
    ending: SessionEnding,
  ): Promise<string[]> {
    return this.endWhere(
      manager,
      `"userId" = ${this.param(1)} AND "endedAt" IS NULL AND "expiresAt" > ${this.param(2)} ` +
        'ORDER BY "lastUsedAt" DESC, "startedAt" DESC, "id" ASC ' +
        `LIMIT 100 OFFSET ${this.param(3)}`,
      [userId, this.instant(ending.at), limit],
      ending,
    );
  }

  /**
   * Ends every active session of `userId` but `keepId`, inside the caller's transaction; returns
   * their ids. A rotation running meanwhile either commits first (and its session ends here) or
   * meets the ended session in its compare-and-set: no lock needed, on either engine.
   */
  async endActiveOf(
    manager: EntityManager,
    userId: string,
    keepId: string | null,
    ending: SessionEnding,
  ): Promise<string[]> {
    return this.endWhere(
      manager,
      `"userId" = ${this.param(1)} AND "endedAt" IS NULL AND "expiresAt" > ${this.param(2)} ` +
        `AND "id" <> ${this.param(3)}`,
      [userId, this.instant(ending.at), keepId ?? ''],
      ending,
    );
  }

  /**
   * Ends the active sessions a selection over `sessions` names (`where`, its parameters from
   * `$1`), in one statement on PostgreSQL (whose update re-checks `endedAt` on a row a concurrent
   * transaction changed) and a read and an update in one unit on SQLite.
   */
  private async endWhere(
    manager: EntityManager,
    where: string,
    parameters: unknown[],
    ending: SessionEnding,
  ): Promise<string[]> {
    const table = `"${this.rows.table}"`;
    const selected = `SELECT "id" FROM ${table} WHERE ${where}`;
    if (this.unitOfWork.isSerialized) {
      const rows = await manager.query<{ id: string }[]>(selected, parameters);
      const ids = rows.map((row) => row.id);
      for (const id of ids) {
        await this.endIfOngoing(manager, id, ending);
      }
      return ids;
    }
    const n = parameters.length;
    const [rows] = await manager.query<[{ id: string }[], number]>(
      `UPDATE ${table} SET "endedAt" = $${n + 1}, "endedByIp" = $${n + 2}, ` +
        `"endReason" = $${n + 3} WHERE "endedAt" IS NULL AND "id" IN (${selected}) RETURNING "id"`,
      [...parameters, this.instant(ending.at), ending.ip, ending.reason],
    );
    return rows.map((row) => row.id);
  }

  /**
   * The cleanup's next `limit` sessions that may hold tokens created before `tokenCutoff`
   * (IDX_sessions_oldestTokenAt, oldest first), inside the caller's transaction; on PostgreSQL
   * passing over sessions another instance is cleaning. `gone`: expired before `cutoff`.
   */
  async pickForCleanup(
    manager: EntityManager,
    tokenCutoff: Date,
    cutoff: Date,
    limit: number,
  ): Promise<SessionToClean[]> {
    const rows = await manager.query<{ id: string; generation: number; gone: unknown }[]>(
      `SELECT "id", "generation", "expiresAt" < ${this.param(1)} AS "gone" ` +
        `FROM "${this.rows.table}" WHERE "oldestTokenAt" < ${this.param(2)} ` +
        `ORDER BY "oldestTokenAt" LIMIT ${this.param(3)}` +
        (this.unitOfWork.isSerialized ? '' : ' FOR UPDATE SKIP LOCKED'),
      [this.instant(cutoff), this.instant(tokenCutoff), limit],
    );
    return rows.map((row) => ({
      id: row.id,
      generation: Number(row.generation),
      gone: Boolean(row.gone),
    }));
  }

  /** Deletes the sessions `ids` (their tokens with them, by the foreign key); returns how many. */
  async deleteWithin(manager: EntityManager, ids: readonly string[]): Promise<number> {
    if (ids.length === 0) {
      return 0;
    }
    const result = await manager.delete(Session, ids);
    return result.affected ?? 0;
  }

  /**
   * After the cleanup removed the old tokens of the sessions `ids`: their `oldestTokenAt` becomes
   * `oldest` (an SQL expression over the session row `s`: its oldest remaining token's creation)
   * but never less than `tokenCutoff`, so a session is picked at most once per purge.
   */
  async markCleanedWithin(
    manager: EntityManager,
    ids: readonly string[],
    oldest: string,
    tokenCutoff: Date,
  ): Promise<void> {
    if (ids.length === 0) {
      return;
    }
    const greatest = this.unitOfWork.isSerialized ? 'MAX' : 'GREATEST';
    const list = ids.map((_id, i) => this.param(i + 2)).join(', ');
    await manager.query(
      `UPDATE "${this.rows.table}" AS s SET "oldestTokenAt" = ${greatest}(COALESCE(${oldest}, ` +
        `s."lastUsedAt"), ${this.param(1)}) WHERE s."id" IN (${list})`,
      [this.instant(tokenCutoff), ...ids],
    );
  }

  /** The `n`th parameter; on SQLite `?`, so each is used once, in order. */
  private param(n: number): string {
    return this.unitOfWork.isSerialized ? '?' : `$${n}`;
  }

  private sqliteStatements(db: Database): SqliteStatements {
    if (this.sqlite === undefined) {
      const table = `"${this.rows.table}"`;
      this.sqlite = {
        byId: db.prepare(this.selectSql('?')),
        advance: db.prepare(
          `UPDATE ${table} SET "generation" = "generation" + 1, "lastUsedAt" = ?, "lastIp" = ?, ` +
            '"lastUserAgent" = ?, "expiresAt" = ? WHERE "id" = ? AND "generation" = ? ' +
            'AND "endedAt" IS NULL AND "expiresAt" > ?',
        ),
        active: db.prepare(activeOfSql(this.listed, 'sqlite')),
      };
    }
    return this.sqlite;
  }
}

function endedColumns(ending: SessionEnding): Partial<Session> {
  return { endedAt: ending.at, endedByIp: ending.ip, endReason: ending.reason };
}

interface SqliteStatements {
  readonly byId: Statement<[string], RawRow>;
  readonly advance: Statement<[unknown, unknown, unknown, unknown, string, number, unknown]>;
  readonly active: Statement<[string, unknown], RawRow>;
}

/** A user's active sessions, with the order of the listing. */
function activeOfSql(listed: EntityRows<Session>, style: 'sqlite' | 'postgres'): string {
  const [userId, at] = style === 'sqlite' ? ['?', '?'] : ['$1', '$2'];
  return (
    `SELECT ${listed.names()} FROM "${listed.table}" WHERE "userId" = ${userId} ` +
    `AND "endedAt" IS NULL AND "expiresAt" > ${at} ` +
    'ORDER BY "lastUsedAt" DESC, "startedAt" DESC, "id" ASC'
  );
}
