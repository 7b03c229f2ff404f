import { Injectable } from '@nestjs/common';
import type { Database, Statement } from 'better-sqlite3';
import { DataSource, type EntityManager } from 'typeorm';
import { EntityRows, type RawRow } from '../../database/entity-rows.js';
import type { GuardedWrite, Precondition } from '../../database/guarded-write.js';
import { NamedStatement } from '../../database/postgres-statements.js';
import { postgresTypeOf, typedParameters } from '../../database/postgres-types.js';
import { UnitOfWork } from '../../database/unit-of-work.js';
import { AuditEventRepository } from '../../audit/audit-event.repository.js';
import type { AuthEventRecord } from '../../events/auth-event.js';
import { DeliverySink, type ComputedFacts } from '../../events/delivery-sink.js';
import { User } from '../../users/entities/user.entity.js';
import { RefreshToken } from '../entities/refresh-token.entity.js';
import { Session } from '../entities/session.entity.js';
import { SessionRepository, type SessionEnding, type SessionUse } from './session.repository.js';

/** What rotation asks of the owner besides being active. */
export interface RotationRules {
  /** Jwt / AccountFlows__RequireVerifiedEmail: the owner's address must be verified. */
  readonly ownerVerified: boolean;
}

/** What one batch of the cleanup did. */
export interface CleanedBatch {
  readonly examined: number;
  readonly tokensDeleted: number;
  readonly sessionsDeleted: number;
}

/** A stored token and its session, as read together. */
export interface PresentedToken {
  readonly token: RefreshToken;
  readonly session: Session;
}

/**
 * What rotate() did. `rotated`: the presented token was its session's newest, the session active,
 * its owner allowed; the session moved to the next generation and the successor was stored.
 * Otherwise nothing was written, and `presented` and `owner` are what the same statement read
 * (null: no such token, or no such owner), for the caller to say why.
 */
export type Rotation =
  | {
      readonly rotated: true;
      /** The session as it was read, before it moved. */
      readonly presented: PresentedToken;
      readonly owner: User;
    }
  | {
      readonly rotated: false;
      readonly presented: PresentedToken | null;
      readonly owner: User | null;
    };

/**
 * The audit row a rotation writes in its own transaction (decision 0023), so that the rotation and
 * its `token_refreshed` row commit together or not at all.
 */
export interface RotationAudit {
  /** SQLite: runs inside the rotation's unit with what it found, to record its event there. */
  readonly withinSqlite: (db: Database, rotation: Rotation) => void;
  /**
   * PostgreSQL: the `token_refreshed` event whose row the statement inserts if, and only if, it
   * rotated; its `userId` and `details` the statement fills in from the rows it wrote.
   */
  readonly refreshedRecord: () => AuthEventRecord;
}

/** What revoke() found and did: the presented token's session, which the call ended or not. */
export interface Revocation {
  readonly sessionId: string;
  /** The presented token's generation. */
  readonly generation: number;
  /** The session's generation when it was ended (or found ended): above `generation` if rotated. */
  readonly sessionGeneration: number;
  /** This call ended the session (false: it had already ended). */
  readonly sessionEnded: boolean;
}

/** The `token_revoked` row a revocation writes in its own transaction. */
export interface RevocationAudit {
  /** Transaction path (SQLite): records the event of what was done, inside the unit. */
  readonly within: (manager: EntityManager, revocation: Revocation) => Promise<void>;
  /**
   * PostgreSQL: the event whose row the statement inserts if, and only if, it found the bearer's
   * token; its `details` the statement fills in from what it did.
   */
  readonly revokedRecord: () => AuthEventRecord;
}

/**
 * What startSessionAfter did: started; or wrote nothing because the account's write did not match
 * (`changed`: read it again and retry) or the precondition did not hold (`refused`).
 */
export type SessionStartOutcome = 'started' | 'changed' | 'refused';

/** The event row a session start writes with it (`registered`, `login_succeeded`). */
export interface SessionStartAudit {
  /** Transaction path: records it inside the unit (listeners hear of it after the commit). */
  readonly within: (manager: EntityManager) => Promise<void>;
  /** PostgreSQL's one statement: the record whose row it inserts, with every column known. */
  readonly record: AuthEventRecord;
}

/** Reads and writes on a token and its session inside one unit. */
export interface RefreshTokenUnit {
  readonly manager: EntityManager;
  /**
   * The token and its session; on PostgreSQL the session's row stays locked until the unit ends,
   * so rotation, reuse detection and logout of one session take turns across instances.
   */
  findByHash(tokenHash: Buffer): Promise<PresentedToken | null>;
  /** The stored token with this digest, alone (its session is the caller's to have read). */
  findToken(tokenHash: Buffer): Promise<RefreshToken | null>;
  /** Ends the session if it has not ended yet; false when it had. */
  endSession(sessionId: string, ending: SessionEnding): Promise<boolean>;
  /**
   * Moves `presented`'s session to the next generation and stores its successor, if the session
   * is still at `presented`'s generation and active; false (and nothing written) otherwise.
   */
  advance(presented: RefreshToken, successorHash: Buffer, use: SessionUse): Promise<boolean>;
}

/**
 * The queries on `refresh_tokens`, on both engines; the only code that names the table. A token
 * row is its digest, its session and generation, and when it was created: what a session is and
 * shows lives in `sessions` (SessionRepository). Rotation, the hot path, moves the session and
 * inserts the successor in one statement on PostgreSQL and one synchronous unit of prepared
 * statements on SQLite, composed of both repositories' fragments, built from the entity metadata.
 */
@Injectable()
export class RefreshTokenRepository {
  private readonly tokens: EntityRows<RefreshToken>;
  private readonly owners: EntityRows<User>;
  private sqlite: SqliteStatements | undefined;
  private postgresRotate: NamedStatement | undefined;
  private postgresRevoke: NamedStatement | undefined;
  private readonly postgresStarts = new Map<string, NamedStatement>();

  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly dataSource: DataSource,
    private readonly audit: AuditEventRepository,
    private readonly sessions: SessionRepository,
    private readonly deliveries: DeliverySink,
  ) {
    this.tokens = new EntityRows(dataSource, RefreshToken);
    this.owners = new EntityRows(dataSource, User);
  }

  /**
   * Rotates the token whose digest is `tokenHash`, atomically, if it is its session's newest, the
   * session has neither ended nor expired at `use.at` and its owner is active (and verified, by
   * `rules`): the session moves to the next generation with `use` as its last use, and
   * `successorHash` is stored as that generation's token. Exactly one of any number of concurrent
   * rotations of one token wins, across instances (a compare-and-set on the session's
   * generation). Reads the token's session and owner in the same statement, and writes
   * `audit`'s row in the same transaction.
   */
  rotate(
    tokenHash: Buffer,
    successorHash: Buffer,
    use: SessionUse,
    rules: RotationRules,
    audit: RotationAudit,
  ): Promise<Rotation> {
    return this.unitOfWork.isSerialized
      ? this.unitOfWork.transactionOnSqlite((db) => {
          const rotation = this.rotateOnSqlite(db, tokenHash, successorHash, use, rules);
          audit.withinSqlite(db, rotation);
          return Promise.resolve(rotation);
        })
      : this.rotateOnPostgres(tokenHash, successorHash, use, rules, audit.refreshedRecord());
  }

  /** Runs `work` in one transaction (see RefreshTokenUnit). */
  atomically<T>(work: (unit: RefreshTokenUnit) => Promise<T>): Promise<T> {
    return this.unitOfWork.transaction((m) =>
      work(new TypeOrmUnit(m, this.sessions, (hash) => this.findLockedWithin(m, hash))),
    );
  }

  /**
   * The token and its session inside the caller's transaction. On PostgreSQL one statement (one
   * round trip) that also locks the session's row until the transaction ends, so the careful
   * path's decision and its write see one state; on SQLite units run alone.
   */
  private async findLockedWithin(
    manager: EntityManager,
    tokenHash: Buffer,
  ): Promise<PresentedToken | null> {
    if (this.unitOfWork.isSerialized) {
      const token = await manager.findOneBy(RefreshToken, { tokenHash });
      const session =
        token === null ? null : await this.sessions.findForUpdate(manager, token.sessionId);
      return token === null || session === null ? null : { token, session };
    }
    const rows = await manager.query<RawRow[]>(
      `WITH t AS (SELECT ${this.tokens.names()} FROM "${this.tokens.table}" ` +
        'WHERE "tokenHash" = $1), ' +
        `s AS (${this.sessions.selectSql('(SELECT "sessionId" FROM t)')} FOR UPDATE) ` +
        `SELECT ${this.tokens.aliased('t', 't_')}, ${this.sessions.aliased('s', 's_')} FROM t, s`,
      [tokenHash],
    );
    const session = rows.length === 0 ? null : this.sessions.hydrate(rows[0], 's_');
    return session === null ? null : { token: this.tokens.hydrate(rows[0], 't_'), session };
  }

  /** The stored token with this digest and its session, or null. Plain reads. */
  async findByHash(tokenHash: Buffer): Promise<PresentedToken | null> {
    const token = await this.unitOfWork.run((m) => m.findOneBy(RefreshToken, { tokenHash }));
    const session = token === null ? null : await this.sessions.findById(token.sessionId);
    return token === null || session === null ? null : { token, session };
  }

  /**
   * Stores a new session and its first token inside the caller's transaction, and keeps its
   * owner at `limit` active sessions: the sessions past it, least recently used first, are ended
   * with `ending`. Logins of one account take turns here on PostgreSQL (a lock taken by the
   * insert itself), so each counts the sessions the others committed and together they never
   * leave more than the limit. Two statements on PostgreSQL. Returns the ids of the sessions it
   * ended.
   */
  async startSession(
    manager: EntityManager,
    session: Session,
    first: RefreshToken,
    limit: number,
    ending: SessionEnding,
  ): Promise<string[]> {
    if (this.unitOfWork.isSerialized) {
      await this.sessions.insertWithin(manager, session);
      await manager.insert(RefreshToken, first);
    } else {
      const sessionValues = this.sessions.values(session);
      const tokenFirst = 2 + sessionValues.length;
      await manager.query(
        `WITH held AS (SELECT pg_advisory_xact_lock(hashtextextended($1, 0)) IS NULL AS held), ` +
          `started AS (${this.sessions.insertSelectSql(2)} FROM held RETURNING "id") ` +
          `INSERT INTO "${this.tokens.table}" (${this.tokens.names()}) ` +
          `SELECT ${typedParameters(this.dataSource, this.tokens.columns, tokenFirst).join(', ')} FROM started`,
        [sessionsLockKey(session.userId), ...sessionValues, ...this.tokens.values(first)],
      );
    }
    // A statement of its own, so that it reads what other logins committed while it waited.
    return this.sessions.endOverLimit(manager, session.userId, limit, ending);
  }

  /**
   * Starts a session with its first token, if and only if `account`'s write (the new account's
   * insert, a login's bookkeeping) succeeds, atomically with it and with `audit`'s row, keeping
   * the owner at `limit` active sessions as startSession does. On PostgreSQL one statement, so one
   * round trip: data-modifying CTEs, each table's from its repository, all conditional on the
   * account's write; foreign keys and unique indexes are checked at the statement's end, and an
   * error the account's write caused is answered as `account.translate` says. The account's write
   * is what makes the starts of one account take turns there: a login's update of its row (see
   * UserRepository.loginStateWrite). With `alongside` (more to write, in the same transaction,
   * that has no fragment), and on SQLite, a transaction of the unit of work that does the same
   * writes in the same order. False, and nothing written, when the account's write did not match.
   */
  async startSessionAfter(
    account: GuardedWrite,
    session: Session,
    first: RefreshToken,
    limit: number,
    ending: SessionEnding,
    audit: SessionStartAudit,
    options: {
      /** What must hold before anything is written; 'refused' when it does not. */
      readonly requires?: Precondition;
      readonly alongside?: (manager: EntityManager) => Promise<void>;
    } = {},
  ): Promise<SessionStartOutcome> {
    const { requires, alongside } = options;
    if (this.unitOfWork.isSerialized || alongside !== undefined) {
      return this.unitOfWork.transaction(async (m): Promise<SessionStartOutcome> => {
        if (requires !== undefined && !(await requires.holds(m))) {
          return 'refused';
        }
        if (!(await account.within(m))) {
          return 'changed';
        }
        await this.startSession(m, session, first, limit, ending);
        await audit.within(m);
        await alongside?.(m);
        return 'started';
      });
    }
    const kind = requires === undefined ? account.kind : `${account.kind}_${requires.kind}`;
    let statement = this.postgresStarts.get(kind);
    if (statement === undefined) {
      statement = new NamedStatement(
        this.dataSource,
        `sessions_start_after_${kind}`,
        this.startAfterSql(account, requires),
      );
      this.postgresStarts.set(kind, statement);
    }
    const values = [
      ...account.values,
      ...(requires?.values ?? []),
      ...this.sessions.values(session),
      ...this.tokens.values(first),
      ...this.sessions.endOverLimitValues(session.userId, Math.max(0, limit - 1), ending),
      ...this.eventValues(audit.record, {}, {}),
    ];
    let row: RawRow | undefined;
    try {
      row = await statement.first(values);
    } catch (error: unknown) {
      throw account.translate(error);
    }
    if (row?.written === 1) {
      this.deliveries.committed(Number(row.queued));
      return 'started';
    }
    return row?.allowed === false ? 'refused' : 'changed';
  }

  /**
   * startSessionAfter's statement on PostgreSQL: `account`'s write, if `requires` holds, then,
   * only for its row, the session, its first token, the sessions past the limit ended, and the
   * audit row. Says whether it wrote and whether `requires` held.
   */
  startAfterSql(account: GuardedWrite, requires?: Precondition): string {
    const requiresFirst = 1 + account.values.length;
    const sessionFirst = requiresFirst + (requires?.values.length ?? 0);
    const tokenFirst = sessionFirst + this.sessions.columnCount;
    const overFirst = tokenFirst + this.tokens.columns.length;
    const auditFirst = overFirst + 6;
    const deliveriesFirst = auditFirst + this.audit.insertSelectValues(PROBE, {}).length;
    const allowed = requires === undefined ? 'TRUE' : `(${requires.sql(requiresFirst)})`;
    return [
      `WITH account AS (${account.sql(1, allowed)}),`,
      `started AS (${this.sessions.insertSelectSql(sessionFirst)} FROM account RETURNING "id"),`,
      `first_token AS (INSERT INTO "${this.tokens.table}" (${this.tokens.names()})`,
      `  SELECT ${typedParameters(this.dataSource, this.tokens.columns, tokenFirst).join(', ')} FROM started),`,
      `over_limit AS (${this.sessions.endOverLimitSql(overFirst, 'EXISTS (SELECT 1 FROM account)')}),`,
      `audited AS (${this.audit.insertSelectSql(auditFirst, {})} FROM account),`,
      `delivered AS (${this.deliveries.insertSelectSql(deliveriesFirst, 'account', {})} RETURNING 1)`,
      'SELECT (SELECT count(*) FROM account)::int AS "written",',
      `  (SELECT count(*) FROM over_limit)::int AS "ended", ${allowed} AS "allowed",`,
      '  (SELECT count(*) FROM delivered)::int AS "queued"',
    ].join('\n');
  }

  /**
   * Spec §4.2 revoke: the token whose digest is `tokenHash`, if its session is `userId`'s, ends
   * that session (unless it had ended) with `ending`, and `audit`'s row is written, atomically;
   * null, and nothing written, for an unknown token or another account's. On PostgreSQL one
   * statement (one round trip) that finds the token, checks the owner, ends the session and writes
   * the row; on SQLite one unit.
   */
  revoke(
    tokenHash: Buffer,
    userId: string,
    ending: SessionEnding,
    audit: RevocationAudit,
  ): Promise<Revocation | null> {
    if (this.unitOfWork.isSerialized) {
      return this.atomically(async (unit) => {
        const presented = await unit.findByHash(tokenHash);
        if (presented === null || presented.session.userId !== userId) {
          return null;
        }
        const { token, session } = presented;
        const revocation: Revocation = {
          sessionId: session.id,
          generation: token.generation,
          sessionGeneration: session.generation,
          sessionEnded: await unit.endSession(session.id, ending),
        };
        await audit.within(unit.manager, revocation);
        return revocation;
      });
    }
    return this.revokeOnPostgres(tokenHash, userId, ending, audit.revokedRecord());
  }

  private async revokeOnPostgres(
    tokenHash: Buffer,
    userId: string,
    ending: SessionEnding,
    revoked: AuthEventRecord,
  ): Promise<Revocation | null> {
    this.postgresRevoke ??= new NamedStatement(
      this.dataSource,
      'refresh_tokens_revoke',
      this.revokeSql(),
    );
    const row = await this.postgresRevoke.first([
      tokenHash,
      userId,
      ...this.sessions.endValues(ending),
      ...this.eventValues(revoked, REVOKE_AUDIT_COMPUTED, REVOKE_FACTS),
    ]);
    if (row === undefined) {
      return null;
    }
    this.deliveries.committed(Number(row.queued));
    return {
      sessionId: String(row.sessionId),
      generation: Number(row.generation),
      sessionGeneration: Number(row.sessionGeneration),
      sessionEnded: row.ended === 1,
    };
  }

  /**
   * revoke's statement on PostgreSQL. Parameters: $1 digest, $2 the bearer, $3–$5 the ending,
   * then the audit row's own columns. The session's end re-checks `endedAt` on a row a concurrent
   * rotation or logout changed (READ COMMITTED), and returns its current generation.
   */
  revokeSql(): string {
    return [
      `WITH presented AS (SELECT ${this.tokens.names()} FROM "${this.tokens.table}"`,
      '  WHERE "tokenHash" = $1),',
      `owned AS (${this.sessions.selectSql('(SELECT "sessionId" FROM presented)')}`,
      '  AND "userId" = $2),',
      `ended AS (${this.sessions.endSql(3, {
        from: 'owned o',
        id: 'o."id"',
        also: 'TRUE',
      })}),`,
      `audited AS (${this.audit.insertSelectSql(6, REVOKE_AUDIT_COMPUTED)}`,
      '  FROM presented p, owned o),',
      `delivered AS (${this.deliveries.insertSelectSql(
        6 + this.audit.insertSelectValues(PROBE, REVOKE_AUDIT_COMPUTED).length,
        'presented p, owned o',
        REVOKE_FACTS,
      )} RETURNING 1)`,
      'SELECT o."id" AS "sessionId", p."generation" AS "generation",',
      '  COALESCE((SELECT "generation" FROM ended), o."generation") AS "sessionGeneration",',
      '  (SELECT count(*) FROM ended)::int AS "ended",',
      '  (SELECT count(*) FROM delivered)::int AS "queued"',
      'FROM presented p, owned o',
    ].join('\n');
  }

  /**
   * The cleanup's batch, in one transaction: of the next `limit` sessions that may hold tokens
   * created before `tokenCutoff` (see Session.oldestTokenAt), those that expired before `cutoff`
   * are deleted with all their tokens; of the others, the tokens of older generations created
   * before `tokenCutoff` are deleted (a rotated token is kept for as long as it would have lived,
   * plus the retention, so that replaying it reads as reuse). Returns the sessions examined, and
   * the tokens and sessions deleted. On PostgreSQL a batch skips sessions another instance is
   * cleaning.
   */
  cleanBatch(cutoff: Date, tokenCutoff: Date, limit: number): Promise<CleanedBatch> {
    return this.unitOfWork.transaction(async (m) => {
      const picked = await this.sessions.pickForCleanup(m, tokenCutoff, cutoff, limit);
      const gone = picked.filter((s) => s.gone);
      const kept = picked.filter((s) => !s.gone);
      let deleted = 0;
      const table = `"${this.tokens.table}"`;
      if (!this.unitOfWork.isSerialized && kept.length > 0) {
        // One statement for the batch: each statement is a round trip on PostgreSQL.
        const [, affected] = await m.query<[unknown, number]>(
          `DELETE FROM ${table} t USING unnest($1::varchar[], $2::int[]) AS p(id, generation) ` +
            'WHERE t."sessionId" = p.id AND t."generation" < p.generation AND t."createdAt" < $3',
          [kept.map((k) => k.id), kept.map((k) => k.generation), tokenCutoff],
        );
        deleted += affected;
      }
      for (const session of this.unitOfWork.isSerialized ? kept : []) {
        const result = await m
          .createQueryBuilder()
          .delete()
          .from(RefreshToken)
          .where('"sessionId" = :id AND "generation" < :generation AND "createdAt" < :before', {
            id: session.id,
            generation: session.generation,
            before: tokenCutoff,
          })
          .execute();
        deleted += result.affected ?? 0;
      }
      if (gone.length > 0) {
        const result = await m
          .createQueryBuilder()
          .delete()
          .from(RefreshToken)
          .where('"sessionId" IN (:...ids)', { ids: gone.map((s) => s.id) })
          .execute();
        deleted += result.affected ?? 0;
      }
      const sessionsDeleted = await this.sessions.deleteWithin(
        m,
        gone.map((s) => s.id),
      );
      await this.sessions.markCleanedWithin(
        m,
        kept.map((s) => s.id),
        `(SELECT t."createdAt" FROM ${table} t WHERE t."sessionId" = s."id" ` +
          'ORDER BY t."generation" LIMIT 1)',
        tokenCutoff,
      );
      return { examined: picked.length, tokensDeleted: deleted, sessionsDeleted };
    });
  }

  /** The rotation statement's SQL on each engine, for the tests that hold it to the metadata. */
  rotationSql(): { readonly sqlite: readonly string[]; readonly postgres: string } {
    const statements = sqliteSql(this.tokens, this.owners);
    return {
      sqlite: [statements.byHash, statements.owner, statements.insert],
      postgres: postgresRotationSql(
        this.tokens,
        this.owners,
        this.sessions,
        this.dataSource,
        this.audit,
        this.deliveries,
      ),
    };
  }

  /**
   * The parameters of an event written by a statement of its own: its audit row's, then its
   * deliveries' (DeliverySink.insertSelectSql), which name the audit row's id.
   */
  private eventValues(
    record: AuthEventRecord,
    auditComputed: Partial<Record<string, string>>,
    facts: ComputedFacts,
  ): unknown[] {
    const row = this.audit.rowOf(record);
    return [
      ...this.audit.insertSelectValues(record, auditComputed, row),
      ...this.deliveries.insertSelectValues(record, row.id, facts),
    ];
  }

  private rotateOnSqlite(
    db: Database,
    tokenHash: Buffer,
    successorHash: Buffer,
    use: SessionUse,
    rules: RotationRules,
  ): Rotation {
    const statements = this.sqliteStatements(db);
    const row = statements.byHash.get(tokenHash);
    const token = row === undefined ? null : this.tokens.hydrate(row);
    const session = token === null ? null : this.sessions.findOnSqlite(db, token.sessionId);
    if (token === null || session === null) {
      return { rotated: false, presented: null, owner: null };
    }
    const presented = { token, session };
    const ownerRow = statements.owner.get(session.userId);
    const owner = ownerRow === undefined ? null : this.owners.hydrate(ownerRow);
    if (!isRotatable(presented, owner, use.at, rules)) {
      return { rotated: false, presented, owner };
    }
    if (!this.sessions.advanceOnSqlite(db, session.id, token.generation, use)) {
      // Units run one at a time on SQLite: what was read above cannot have changed.
      throw new Error('Session changed while its token was being rotated');
    }
    statements.insert.run(...this.tokens.values(successorOf(token, successorHash, use.at)));
    return { rotated: true, presented, owner };
  }

  private async rotateOnPostgres(
    tokenHash: Buffer,
    successorHash: Buffer,
    use: SessionUse,
    rules: RotationRules,
    refreshed: AuthEventRecord,
  ): Promise<Rotation> {
    this.postgresRotate ??= new NamedStatement(
      this.dataSource,
      'refresh_tokens_rotate',
      postgresRotationSql(
        this.tokens,
        this.owners,
        this.sessions,
        this.dataSource,
        this.audit,
        this.deliveries,
      ),
    );
    const row = await this.postgresRotate.first([
      tokenHash,
      ...this.sessions.advanceValues(use),
      rules.ownerVerified,
      successorHash,
      ...this.eventValues(refreshed, ROTATION_AUDIT_COMPUTED, ROTATION_FACTS),
    ]);
    // The statement has committed (it is its own transaction, and the driver answers after the
    // commit): the user agent's id it stored can be remembered.
    if (row !== undefined && row.rotated === 1) {
      this.audit.insertSelectCommitted(refreshed, row.a_userAgentId as number | null);
      this.deliveries.committed(Number(row.queued));
    }
    const session = row === undefined ? null : this.sessions.hydrate(row, 's_');
    if (row === undefined || session === null) {
      return { rotated: false, presented: null, owner: null };
    }
    const presented = { token: this.tokens.hydrate(row, 't_'), session };
    const owner = row.u_id === null ? null : this.owners.hydrate(row, 'u_');
    if (row.rotated !== 1 || owner === null) {
      return { rotated: false, presented, owner };
    }
    return { rotated: true, presented, owner };
  }

  private sqliteStatements(db: Database): SqliteStatements {
    if (this.sqlite === undefined) {
      const sql = sqliteSql(this.tokens, this.owners);
      this.sqlite = {
        byHash: db.prepare(sql.byHash),
        owner: db.prepare(sql.owner),
        insert: db.prepare(sql.insert),
      };
    }
    return this.sqlite;
  }
}

interface SqliteStatements {
  readonly byHash: Statement<[Buffer], RawRow>;
  readonly owner: Statement<[string], RawRow>;
  readonly insert: Statement<unknown[]>;
}

/**
 * The rotation's statements on SQLite: the token, its owner (the one read of `users` outside
 * UserRepository, decision 0018: the owner's state must come in the rotation's unit), the
 * successor's insert. The session's are SessionRepository's.
 */
function sqliteSql(
  tokens: EntityRows<RefreshToken>,
  owners: EntityRows<User>,
): { byHash: string; owner: string; insert: string } {
  return {
    byHash: `SELECT ${tokens.names()} FROM "${tokens.table}" WHERE "tokenHash" = ?`,
    owner: `SELECT ${owners.names()} FROM "${owners.table}" WHERE "id" = ?`,
    insert: `INSERT INTO "${tokens.table}" (${tokens.names()}) VALUES (${tokens.placeholders('sqlite')})`,
  };
}

/**
 * Rotation on PostgreSQL in one statement, so one round trip: find the presented token by its
 * digest, read its session and the session's owner, move the session to the next generation
 * only if it is still at the presented token's, active, and the owner may refresh (the
 * compare-and-set of SessionRepository.advanceSql: of concurrent rotations exactly one matches),
 * and insert the successor under that generation. The `token_refreshed` audit row is one more
 * data-modifying CTE, which inserts only when the session moved (decision 0023); it returns
 * the id of its user agent, which the caller remembers once the statement has committed, so that
 * the next rotation from that user agent passes the id and skips the look-up (decision 0032).
 * Parameters: $1 digest, $2 at, $3 ip, $4 user agent, $5 new expiry, $6 owner must be verified,
 * $7 the successor's digest, then the audit row's own columns (the user agent as two: its
 * remembered id, or its text).
 */
function postgresRotationSql(
  tokens: EntityRows<RefreshToken>,
  owners: EntityRows<User>,
  sessions: SessionRepository,
  dataSource: DataSource,
  audit: AuditEventRepository,
  deliveries: DeliverySink,
): string {
  const deliveriesFirst = 8 + audit.insertSelectValues(PROBE, ROTATION_AUDIT_COMPUTED).length;
  const successor: Record<string, string> = {
    tokenHash: `$7::${postgresTypeOf(dataSource, tokens.column('tokenHash'))}`,
    sessionId: 'a."id"',
    generation: 'a."generation"',
    createdAt: `$2::${postgresTypeOf(dataSource, tokens.column('createdAt'))}`,
  };
  const values = tokens.columns.map((column) => {
    const value = successor[column.propertyName];
    if (value === undefined) {
      throw new Error(`The rotation has no value for refresh_tokens.${column.propertyName}`);
    }
    return value;
  });
  const table = `"${tokens.table}"`;
  return [
    `WITH presented AS (SELECT ${tokens.names()} FROM ${table} WHERE "tokenHash" = $1),`,
    `session AS (${sessions.selectSql('(SELECT "sessionId" FROM presented)')}),`,
    `owner AS (SELECT ${owners.names()} FROM "${owners.table}"`,
    '  WHERE "id" = (SELECT "userId" FROM session)),',
    `advanced AS (${sessions.advanceSql(2, {
      from: 'presented p, owner u',
      id: 'p."sessionId"',
      generation: 'p."generation"',
      also: 'u."isActive" AND (NOT $6::boolean OR u."emailVerifiedAt" IS NOT NULL)',
    })}),`,
    `inserted AS (INSERT INTO ${table} (${tokens.names()})`,
    `  SELECT ${values.join(', ')} FROM advanced a RETURNING "sessionId"),`,
    `audited AS (${audit.insertSelectSql(8, ROTATION_AUDIT_COMPUTED)}`,
    `  FROM advanced a, inserted i ${audit.insertSelectReturning}),`,
    `delivered AS (${deliveries.insertSelectSql(deliveriesFirst, 'advanced a, inserted i', ROTATION_FACTS)}`,
    '  RETURNING 1)',
    `SELECT ${tokens.aliased('p', 't_')}, ${sessions.aliased('s', 's_')},`,
    `  ${owners.aliased('u', 'u_')}, (SELECT count(*) FROM inserted)::int AS "rotated",`,
    '  (SELECT "userAgentId" FROM audited) AS "a_userAgentId",',
    '  (SELECT count(*) FROM delivered)::int AS "queued"',
    'FROM presented p LEFT JOIN session s ON true LEFT JOIN owner u ON true',
  ].join('\n');
}

/**
 * The columns of the rotation's `token_refreshed` row that its statement computes: the owner, and
 * the details audit-row.ts stores for the event, written as JSON.stringify writes them (the same
 * keys, no spaces; test/audit/audit-trail.e2e-spec.ts compares them on PostgreSQL). The session
 * id is a UUID the service made, so it needs no escaping.
 */
const ROTATION_AUDIT_COMPUTED = {
  userId: 'a."userId"',
  details: `'{"familyId":"' || a."id" || '","generation":' || (a."generation" - 1) || '}'`,
} as const;

/**
 * The columns of the revocation's `token_revoked` row that its statement computes: the owner, and
 * the details audit-row.ts stores for the event, as JSON.stringify writes them (keys in its order,
 * no spaces). The session id is a UUID the service made, so it needs no escaping.
 */
const REVOKE_AUDIT_COMPUTED = {
  userId: 'o."userId"',
  details:
    `'{"familyId":"' || o."id" || '","generation":' || p."generation" || ` +
    `',"sessionEnded":' || (EXISTS (SELECT 1 FROM ended))::text || '}'`,
} as const;

/** The rotation's account and session, as its statement knows them: the advanced session's. */
const ROTATION_FACTS: ComputedFacts = { accountId: 'a."userId"', sessionId: 'a."id"' };

/** The revocation's account and session: the owned session's. */
const REVOKE_FACTS: ComputedFacts = { accountId: 'o."userId"', sessionId: 'o."id"' };

/**
 * A record to count an audit row's parameters with (their number does not depend on the event),
 * so a statement knows where the next fragment's parameters start.
 */
const PROBE: AuthEventRecord = {
  event: { type: 'account_deleted', userId: '' },
  origin: { ip: '', userAgent: null, requestId: '' },
  at: new Date(0),
};

/** The advisory lock that makes the session starts of one account take turns on PostgreSQL. */
function sessionsLockKey(userId: string): string {
  return `user-sessions:${userId}`;
}

/** SQLite's rotation applies the rules the PostgreSQL statement's WHERE clause states. */
function isRotatable(
  presented: PresentedToken,
  owner: User | null,
  now: Date,
  rules: RotationRules,
): owner is User {
  return (
    owner !== null &&
    isActiveToken(presented, now) &&
    owner.isActive &&
    (!rules.ownerVerified || owner.emailVerifiedAt !== null)
  );
}

/** Spec §3.2 "active": the session's newest token, the session neither ended nor expired. */
export function isActiveToken(presented: PresentedToken, now: Date): boolean {
  return (
    presented.token.generation === presented.session.generation && presented.session.isActiveAt(now)
  );
}

/** The token stored for the generation after `presented`'s. */
function successorOf(presented: RefreshToken, tokenHash: Buffer, at: Date): RefreshToken {
  return Object.assign(new RefreshToken(), {
    tokenHash,
    sessionId: presented.sessionId,
    generation: presented.generation + 1,
    createdAt: at,
  });
}

/** The careful path's unit: TypeORM on the unit's transaction. */
class TypeOrmUnit implements RefreshTokenUnit {
  constructor(
    readonly manager: EntityManager,
    private readonly sessions: SessionRepository,
    readonly findByHash: (tokenHash: Buffer) => Promise<PresentedToken | null>,
  ) {}

  findToken(tokenHash: Buffer): Promise<RefreshToken | null> {
    return this.manager.findOneBy(RefreshToken, { tokenHash });
  }

  endSession(sessionId: string, ending: SessionEnding): Promise<boolean> {
    return this.sessions.endIfOngoing(this.manager, sessionId, ending);
  }

  async advance(presented: RefreshToken, successorHash: Buffer, use: SessionUse): Promise<boolean> {
    const moved = await this.sessions.advanceWithin(
      this.manager,
      presented.sessionId,
      presented.generation,
      use,
    );
    if (moved) {
      await this.manager.insert(RefreshToken, successorOf(presented, successorHash, use.at));
    }
    return moved;
  }
}
