import { Injectable } from '@nestjs/common';
import type { Database, Statement } from 'better-sqlite3';
import { DataSource, In, MoreThanOrEqual, Not, type EntityManager } from 'typeorm';
import { deleteSelected } from '../database/delete-selected.js';
import { EntityRows, type RawRow } from '../database/entity-rows.js';
import { NamedStatement } from '../database/postgres-statements.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { AuditEventRepository } from '../audit/audit-event.repository.js';
import type { AuthEventRecord } from '../events/auth-event.js';
import { User } from '../users/entities/user.entity.js';
import {
  activeTokensOf,
  RefreshToken,
  SESSION_TOKEN_COLUMNS,
  type SessionToken,
} from './entities/refresh-token.entity.js';

/** What a revocation records. */
export interface Revocation {
  readonly at: Date;
  readonly ip: string;
  readonly reason: string;
  /** Set by rotation: the token that replaces this one. */
  readonly replacedByTokenId?: string;
}

/**
 * The columns a successor takes from the token it replaces: its owner, session and place in it,
 * and how the session was authenticated (the `amr` claim).
 */
type InheritedColumn = 'userId' | 'familyId' | 'generation' | 'sessionStartedAt' | 'authMethods';

/** A successor's own fields; rotate() fills in the ones it inherits. */
export type SuccessorToken = Omit<
  RefreshToken,
  InheritedColumn | 'owner' | 'hasExpiredAt' | 'isActiveAt'
>;

/** What rotation asks of the owner besides being active. */
export interface RotationRules {
  /** Jwt / AccountFlows__RequireVerifiedEmail: the owner's address must be verified. */
  readonly ownerVerified: boolean;
}

/**
 * What rotate() did. `rotated`: the presented token was active, its owner allowed, and it was
 * revoked and replaced. Otherwise nothing was written, and `presented` and `owner` are what the
 * same statement read (null: no such token, or no such owner), for the caller to say why.
 */
export type Rotation =
  | {
      readonly rotated: true;
      readonly presented: RefreshToken;
      readonly owner: User;
      readonly successor: RefreshToken;
    }
  | {
      readonly rotated: false;
      readonly presented: RefreshToken | null;
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

/** What never changes in a stored token: whose it is and where it stands in its session. */
export type TokenIdentity = Pick<RefreshToken, 'id' | 'userId' | 'familyId' | 'generation'>;

/** Reads and writes on refresh tokens inside one unit, with the token's family held. */
export interface RefreshTokenUnit {
  readonly manager: EntityManager;
  /**
   * The token's identity, with its family's lock held until the unit ends (PostgreSQL), in one
   * statement. Its state may have changed while the lock was awaited: findByHash reads that.
   */
  lockByHash(tokenHash: string): Promise<TokenIdentity | null>;
  /** The token, read once its family's lock is held (PostgreSQL) until the unit ends. */
  findByHash(tokenHash: string): Promise<RefreshToken | null>;
  /** Revokes the token if it is still active; false when it was not. */
  revokeIfActive(tokenId: string, revocation: Revocation): Promise<boolean>;
  /**
   * Revokes the still-active tokens of `token`'s session from `token` itself, or only those
   * rotated out of it (its descendants); returns their ids, `token`'s first. One statement.
   */
  revokeActiveFrom(
    token: TokenIdentity,
    revocation: Revocation,
    from: 'itself' | 'descendants',
  ): Promise<string[]>;
  insert(token: RefreshToken): Promise<void>;
}

/** The newest token of a family, enough to tell whether the session is active. */
export type NewestToken = Pick<RefreshToken, 'userId' | 'isRevoked' | 'expiresAt' | 'isActiveAt'>;

/**
 * A family's newest token: one seek to the end of the family's range in IDX_refresh_tokens_family
 * (familyId, generation), however many generations it has (test/active-session.e2e-spec.ts reads
 * the plan on both engines).
 */
export const NEWEST_TOKEN_OF_FAMILY =
  'SELECT "userId", "isRevoked", "expiresAt" FROM "refresh_tokens" WHERE "familyId" = $1 ' +
  'ORDER BY "generation" DESC LIMIT 1';

const INHERITED: Readonly<Record<InheritedColumn, string>> = {
  userId: 'r."userId"',
  familyId: 'r."familyId"',
  generation: 'r."generation" + 1',
  sessionStartedAt: 'r."sessionStartedAt"',
  authMethods: 'r."authMethods"',
};

/**
 * The queries on `refresh_tokens`, on both engines; the only code that names the table. Used by
 * the tokens module's services. Rotation, the hot path, is one statement on PostgreSQL and one
 * synchronous unit of prepared statements on SQLite, both built from the entity metadata; the
 * rest goes through TypeORM.
 */
@Injectable()
export class RefreshTokenRepository {
  private readonly tokens: EntityRows<RefreshToken>;
  private readonly owners: EntityRows<User>;
  private sqlite: SqliteStatements | undefined;
  private postgresRotate: NamedStatement | undefined;
  private postgresNewest: NamedStatement | undefined;
  private postgresActive: NamedStatement | undefined;
  /** The columns a session listing shows. */
  private readonly listed: EntityRows<RefreshToken>;

  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly dataSource: DataSource,
    private readonly audit: AuditEventRepository,
  ) {
    this.tokens = new EntityRows(dataSource, RefreshToken);
    this.owners = new EntityRows(dataSource, User);
    this.listed = new EntityRows(dataSource, RefreshToken, SESSION_TOKEN_COLUMNS);
  }

  /**
   * Revokes the token whose digest is `tokenHash` and stores `successor` in its place, atomically,
   * if the token is neither revoked nor expired at `revocation.at` and its owner is active (and
   * verified, by `rules`). Exactly one of any number of concurrent rotations of one token wins,
   * across instances: the others find it revoked. Reads the token's owner in the same statement,
   * and writes `audit`'s row in the same transaction.
   */
  rotate(
    tokenHash: string,
    successor: SuccessorToken,
    revocation: Revocation,
    rules: RotationRules,
    audit: RotationAudit,
  ): Promise<Rotation> {
    return this.unitOfWork.isSerialized
      ? this.unitOfWork.transactionOnSqlite((db) => {
          const rotation = this.rotateOnSqlite(db, tokenHash, successor, revocation, rules);
          audit.withinSqlite(db, rotation);
          return Promise.resolve(rotation);
        })
      : this.rotateOnPostgres(tokenHash, successor, revocation, rules, audit.refreshedRecord());
  }

  /**
   * Runs `work` in one transaction. On PostgreSQL, findByHash takes the token family's lock, so
   * rotation, reuse detection and revocation of one family never interleave, across instances.
   */
  atomically<T>(work: (unit: RefreshTokenUnit) => Promise<T>): Promise<T> {
    return this.unitOfWork.transaction((m) => work(this.unitWithin(m)));
  }

  /** The unit on a transaction already begun. */
  private unitWithin(manager: EntityManager): RefreshTokenUnit {
    return new TypeOrmUnit(manager, this.unitOfWork);
  }

  /** The stored token with this digest, or null. A plain read. */
  findByHash(tokenHash: string): Promise<RefreshToken | null> {
    return this.unitOfWork.run((m) => m.findOneBy(RefreshToken, { tokenHash }));
  }

  /**
   * Stores the first token of a new session inside the caller's transaction, and keeps its owner
   * at `limit` active sessions: the sessions past it, least recently used first, are ended with
   * `revocation`. Logins of one account take turns here on PostgreSQL (a lock taken by the insert
   * itself), so each counts the sessions the others committed and together they never leave more
   * than the limit. Two statements on PostgreSQL. Returns the ids of the tokens it revoked.
   */
  async startSession(
    manager: EntityManager,
    token: RefreshToken,
    limit: number,
    revocation: Revocation,
  ): Promise<string[]> {
    if (this.unitOfWork.isSerialized) {
      await manager.insert(RefreshToken, token);
      return this.revokeOverLimitOnSqlite(manager, token.userId, limit, revocation);
    }
    await manager.query(
      `WITH held AS (SELECT pg_advisory_xact_lock(hashtextextended($1, 0)) IS NULL AS held) ` +
        `INSERT INTO "${this.tokens.table}" (${this.tokens.names()}) ` +
        `SELECT ${postgresCasts(this.tokens, this.dataSource, 2).join(', ')} FROM held`,
      [sessionsLockKey(token.userId), ...this.tokens.values(token)],
    );
    // A statement of its own, so that it reads what other logins committed while it waited.
    const [rows] = await manager.query<[{ id: string }[], number]>(
      `UPDATE "${this.tokens.table}" SET "isRevoked" = true, "revokedAt" = $1, ` +
        '"revokedByIp" = $2, "reasonRevoked" = $3 WHERE "isRevoked" = false AND "id" IN (' +
        `SELECT "id" FROM "${this.tokens.table}" WHERE "userId" = $4 AND "isRevoked" = false ` +
        'AND "expiresAt" > $1 ORDER BY "createdAt" DESC, "sessionStartedAt" DESC, "familyId" ASC ' +
        // One session starts at a time, so at most one is over the limit; a bound all the same.
        'OFFSET $5 LIMIT 100) RETURNING "id"',
      [revocation.at, revocation.ip, revocation.reason, token.userId, limit],
    );
    return rows.map((row) => row.id);
  }

  private async revokeOverLimitOnSqlite(
    manager: EntityManager,
    userId: string,
    limit: number,
    revocation: Revocation,
  ): Promise<string[]> {
    const overLimit = await manager.find(RefreshToken, {
      select: { id: true },
      where: activeTokensOf(userId, revocation.at),
      order: { createdAt: 'DESC', sessionStartedAt: 'DESC', familyId: 'ASC' },
      skip: limit,
      take: 100,
    });
    const ids = overLimit.map((token) => token.id);
    if (ids.length > 0) {
      await manager.update(
        RefreshToken,
        { id: In(ids), isRevoked: false },
        revokedColumns(revocation),
      );
    }
    return ids;
  }

  /**
   * Revokes the active tokens of `userId` (one per active session), but those of `keepFamilyId`,
   * inside the caller's transaction. On PostgreSQL it takes the lock of each family first, so a
   * rotation running meanwhile either commits before (and its new token is revoked here) or
   * starts after (and finds its token revoked).
   */
  async revokeActiveOf(
    manager: EntityManager,
    userId: string,
    keepFamilyId: string | null,
    revocation: Revocation,
  ): Promise<{ readonly tokenIds: string[]; readonly familyIds: string[] }> {
    const where = {
      ...activeTokensOf(userId, revocation.at),
      ...(keepFamilyId === null ? {} : { familyId: Not(keepFamilyId) }),
    };
    const families = new Set(
      (await manager.find(RefreshToken, { select: { familyId: true }, where })).map(
        (t) => t.familyId,
      ),
    );
    // Sorted, so two calls for one user cannot each hold a lock the other waits for.
    for (const familyId of [...families].sort()) {
      await this.unitOfWork.lock(manager, familyLockKey(familyId));
    }
    const tokens = await manager.find(RefreshToken, {
      select: { id: true, familyId: true },
      where,
    });
    const tokenIds = tokens.map((t) => t.id);
    if (tokenIds.length > 0) {
      await manager.update(
        RefreshToken,
        { id: In(tokenIds), isRevoked: false },
        revokedColumns(revocation),
      );
    }
    return { tokenIds, familyIds: [...new Set(tokens.map((t) => t.familyId))] };
  }

  /**
   * The newest token of a family, which alone can be active. It runs on every protected request
   * when Jwt__RequireActiveSession is on, so it is one prepared statement on SQLite and one named
   * statement on PostgreSQL.
   */
  async newestOfFamily(familyId: string): Promise<NewestToken | null> {
    const row = this.unitOfWork.isSerialized
      ? await this.unitOfWork.runOnSqlite((db) => this.sqliteStatements(db).newest.get(familyId))
      : await (this.postgresNewest ??= new NamedStatement(
          this.dataSource,
          'refresh_tokens_newest_of_family',
          NEWEST_TOKEN_OF_FAMILY,
        )).first([familyId]);
    return row === undefined ? null : this.tokens.hydrate(row);
  }

  /**
   * The active tokens of `userId` (one per active session), most recently used first: a read
   * through IDX_refresh_tokens_userId of the listed columns only, as a prepared statement on
   * SQLite and a named statement on PostgreSQL, mapped without TypeORM's per-row work, because a
   * user may hold a thousand sessions (Sessions__MaxActivePerUser).
   */
  async activeOf(userId: string, now: Date): Promise<SessionToken[]> {
    const at = this.dataSource.driver.preparePersistentValue(
      now,
      this.tokens.column('expiresAt'),
    ) as unknown;
    const rows = this.unitOfWork.isSerialized
      ? await this.unitOfWork.runOnSqlite((db) => this.sqliteStatements(db).active.all(userId, at))
      : await (this.postgresActive ??= new NamedStatement(
          this.dataSource,
          'refresh_tokens_active_of',
          activeOfSql(this.listed, 'postgres'),
        )).rows([userId, at]);
    return rows.map((row) => this.listed.hydrate(row));
  }

  /**
   * Deletes up to `limit` tokens that expired before `cutoff`, oldest first; returns how many. On
   * PostgreSQL a batch skips rows another instance is already deleting.
   */
  deleteExpiredBatch(cutoff: Date, limit: number): Promise<number> {
    return this.unitOfWork.run((m) => {
      const batch = m
        .createQueryBuilder(RefreshToken, 'expired')
        .select('expired.id')
        .where('expired.expiresAt < :cutoff', { cutoff })
        .orderBy('expired.expiresAt')
        .limit(limit);
      return deleteSelected(m, RefreshToken, batch, !this.unitOfWork.isSerialized);
    });
  }

  /** The rotation statement's SQL on each engine, for the tests that hold it to the metadata. */
  rotationSql(): { readonly sqlite: readonly string[]; readonly postgres: string } {
    const statements = sqliteSql(this.tokens, this.owners);
    return {
      sqlite: [statements.byHashWithOwner, statements.revokeIfActive, statements.insert],
      postgres: postgresRotationSql(this.tokens, this.owners, this.dataSource, this.audit),
    };
  }

  private rotateOnSqlite(
    db: Database,
    tokenHash: string,
    successor: SuccessorToken,
    revocation: Revocation,
    rules: RotationRules,
  ): Rotation {
    const statements = this.sqliteStatements(db);
    const row = statements.byHashWithOwner.get(tokenHash);
    if (row === undefined) {
      return { rotated: false, presented: null, owner: null };
    }
    const presented = this.tokens.hydrate(row, 't_');
    const owner = row.u_id === null ? null : this.owners.hydrate(row, 'u_');
    if (!isRotatable(presented, owner, revocation.at, rules)) {
      return { rotated: false, presented, owner };
    }
    const { changes } = statements.revokeIfActive.run(
      ...this.revocationValues(revocation),
      presented.id,
    );
    if (changes !== 1) {
      // Units run one at a time on SQLite: what was read above cannot have changed.
      throw new Error('Refresh token changed while it was being rotated');
    }
    const next = successorOf(presented, successor);
    statements.insert.run(...this.tokens.values(next));
    return { rotated: true, presented: asRevoked(presented, revocation), owner, successor: next };
  }

  private async rotateOnPostgres(
    tokenHash: string,
    successor: SuccessorToken,
    revocation: Revocation,
    rules: RotationRules,
    refreshed: AuthEventRecord,
  ): Promise<Rotation> {
    this.postgresRotate ??= new NamedStatement(
      this.dataSource,
      'refresh_tokens_rotate',
      postgresRotationSql(this.tokens, this.owners, this.dataSource, this.audit),
    );
    const values = this.tokens.values(Object.assign(new RefreshToken(), successor));
    const own = values.filter((_value, i) => !(this.tokens.columns[i].propertyName in INHERITED));
    const row = await this.postgresRotate.first([
      tokenHash,
      ...this.revocationValues(revocation),
      rules.ownerVerified,
      ...own,
      ...this.audit.insertSelectValues(refreshed, ROTATION_AUDIT_COMPUTED),
    ]);
    if (row === undefined) {
      return { rotated: false, presented: null, owner: null };
    }
    const presented = this.tokens.hydrate(row, 't_');
    const owner = row.u_id === null ? null : this.owners.hydrate(row, 'u_');
    if (row.rotated !== 1 || owner === null) {
      return { rotated: false, presented, owner };
    }
    return {
      rotated: true,
      presented: asRevoked(presented, revocation),
      owner,
      successor: successorOf(presented, successor),
    };
  }

  /** at, ip, reason, replacedByTokenId: the parameters of a revocation, as the driver wants them. */
  private revocationValues(revocation: Revocation): [unknown, string, string, string | null] {
    return [
      this.dataSource.driver.preparePersistentValue(
        revocation.at,
        this.tokens.column('revokedAt'),
      ) as unknown,
      revocation.ip,
      revocation.reason,
      revocation.replacedByTokenId ?? null,
    ];
  }

  private sqliteStatements(db: Database): SqliteStatements {
    if (this.sqlite === undefined) {
      const sql = sqliteSql(this.tokens, this.owners);
      this.sqlite = {
        byHashWithOwner: db.prepare(sql.byHashWithOwner),
        revokeIfActive: db.prepare(sql.revokeIfActive),
        insert: db.prepare(sql.insert),
        newest: db.prepare(NEWEST_TOKEN_OF_FAMILY.replace('$1', '?')),
        active: db.prepare(activeOfSql(this.listed, 'sqlite')),
      };
    }
    return this.sqlite;
  }
}

interface SqliteStatements {
  readonly byHashWithOwner: Statement<[string], RawRow>;
  readonly revokeIfActive: Statement<[unknown, string, string, string | null, string]>;
  readonly insert: Statement<unknown[]>;
  readonly newest: Statement<[string], RawRow>;
  readonly active: Statement<[string, unknown], RawRow>;
}

/**
 * A user's active tokens, what activeTokensOf() selects, with the order of the listing: ties
 * (one instant) fall back to the newer session, then the id, so the order is stable.
 */
function activeOfSql(listed: EntityRows<RefreshToken>, style: 'sqlite' | 'postgres'): string {
  const [userId, at, isFalse] = style === 'sqlite' ? ['?', '?', '0'] : ['$1', '$2', 'false'];
  return (
    `SELECT ${listed.names()} FROM "${listed.table}" WHERE "userId" = ${userId} ` +
    `AND "isRevoked" = ${isFalse} AND "expiresAt" > ${at} ` +
    'ORDER BY "createdAt" DESC, "sessionStartedAt" DESC, "familyId" ASC'
  );
}

/** The rotation's statements on SQLite: the token with its owner, the revocation, the insert. */
function sqliteSql(
  tokens: EntityRows<RefreshToken>,
  owners: EntityRows<User>,
): { byHashWithOwner: string; revokeIfActive: string; insert: string } {
  return {
    byHashWithOwner:
      `SELECT ${tokens.aliased('t', 't_')}, ${owners.aliased('u', 'u_')} ` +
      `FROM "${tokens.table}" t LEFT JOIN "${owners.table}" u ON u."id" = t."userId" ` +
      'WHERE t."tokenHash" = ?',
    revokeIfActive:
      `UPDATE "${tokens.table}" SET "isRevoked" = 1, "revokedAt" = ?, "revokedByIp" = ?, ` +
      '"reasonRevoked" = ?, "replacedByTokenId" = ? WHERE "id" = ? AND "isRevoked" = 0',
    insert: `INSERT INTO "${tokens.table}" (${tokens.names()}) VALUES (${tokens.placeholders('sqlite')})`,
  };
}

/**
 * Rotation on PostgreSQL in one statement, so one round trip: find the presented token by its
 * digest, take its family's lock (the one reuse detection and revocation take, so they never
 * interleave with a rotation), read its owner, revoke it only if it is still active and the owner
 * may refresh, and insert the successor, which inherits its owner, family and session from the
 * revoked row. Under READ COMMITTED, an update that meets a row another transaction changed
 * re-checks its conditions against the committed row, so of two concurrent rotations of one token
 * only the first revokes it and inserts a successor; the other's update matches nothing.
 * The `token_refreshed` audit row is one more data-modifying CTE, which inserts only when the
 * successor was inserted (decision 0023): same statement, same transaction, no more round trips.
 * Parameters: $1 digest, $2 at, $3 ip, $4 reason, $5 successor id, $6 owner must be verified,
 * then the successor's own columns in entity order, then the audit row's own columns.
 */
function postgresRotationSql(
  tokens: EntityRows<RefreshToken>,
  owners: EntityRows<User>,
  dataSource: DataSource,
  audit: AuditEventRepository,
): string {
  let next = 7;
  const values = tokens.columns.map((column) => {
    const inherited = INHERITED[column.propertyName as InheritedColumn] as string | undefined;
    if (inherited !== undefined) {
      return inherited;
    }
    const [placeholder] = postgresCasts({ columns: [column] }, dataSource, next);
    next += 1;
    return placeholder;
  });
  const table = `"${tokens.table}"`;
  return [
    `WITH presented AS (SELECT ${tokens.names()} FROM ${table} WHERE "tokenHash" = $1),`,
    'held AS (SELECT pg_advisory_xact_lock(hashtextextended(',
    `  '${FAMILY_LOCK_PREFIX}' || "familyId", 0)) IS NULL AS held FROM presented),`,
    `owner AS (SELECT ${owners.names()} FROM "${owners.table}"`,
    '  WHERE "id" = (SELECT "userId" FROM presented)),',
    `revoked AS (UPDATE ${table} t SET "isRevoked" = true, "revokedAt" = $2,`,
    '  "revokedByIp" = $3, "reasonRevoked" = $4, "replacedByTokenId" = $5',
    '  FROM presented p, owner u, held',
    '  WHERE t."id" = p."id" AND t."isRevoked" = false AND t."expiresAt" > $2',
    '  AND u."isActive" AND (NOT $6::boolean OR u."emailVerifiedAt" IS NOT NULL)',
    `  RETURNING ${Object.keys(INHERITED)
      .map((name) => `t."${name}"`)
      .join(', ')}),`,
    `inserted AS (INSERT INTO ${table} (${tokens.names()})`,
    `  SELECT ${values.join(', ')} FROM revoked r RETURNING "userId", "familyId"),`,
    `audited AS (${audit.insertSelectSql(next, ROTATION_AUDIT_COMPUTED)}`,
    '  FROM inserted i, presented p)',
    `SELECT ${tokens.aliased('p', 't_')}, ${owners.aliased('u', 'u_')},`,
    '  (SELECT count(*) FROM inserted)::int AS "rotated"',
    'FROM presented p LEFT JOIN owner u ON true',
  ].join('\n');
}

/**
 * `$first::type, ...`: one typed parameter per column, for an INSERT ... SELECT, where PostgreSQL
 * cannot infer a parameter's type from the target column.
 */
function postgresCasts(
  rows: Pick<EntityRows<RefreshToken>, 'columns'>,
  dataSource: DataSource,
  first: number,
): string[] {
  return rows.columns.map(
    (column, i) => `$${first + i}::${dataSource.driver.normalizeType(column)}`,
  );
}

const FAMILY_LOCK_PREFIX = 'refresh-family:';

/**
 * The columns of the rotation's `token_refreshed` row that its statement computes: the owner, and
 * the details audit-row.ts stores for the event (the same keys; test/audit/audit-trail.e2e-spec.ts
 * compares them on PostgreSQL).
 */
const ROTATION_AUDIT_COMPUTED = {
  userId: 'i."userId"',
  details:
    'json_build_object(\'familyId\', i."familyId", \'tokenId\', p."id", ' +
    "'replacedByTokenId', $5::text)::text",
} as const;

/** The advisory lock that makes the session starts of one account take turns on PostgreSQL. */
function sessionsLockKey(userId: string): string {
  return `user-sessions:${userId}`;
}

/** The advisory lock that makes the changes of one token family take turns on PostgreSQL. */
function familyLockKey(familyId: string): string {
  return `${FAMILY_LOCK_PREFIX}${familyId}`;
}

/** SQLite's rotation applies the rules the PostgreSQL statement's WHERE clause states. */
function isRotatable(
  token: RefreshToken,
  owner: User | null,
  now: Date,
  rules: RotationRules,
): owner is User {
  return (
    owner !== null &&
    token.isActiveAt(now) &&
    owner.isActive &&
    (!rules.ownerVerified || owner.emailVerifiedAt !== null)
  );
}

function successorOf(presented: RefreshToken, own: SuccessorToken): RefreshToken {
  return Object.assign(new RefreshToken(), own, {
    userId: presented.userId,
    familyId: presented.familyId,
    generation: presented.generation + 1,
    sessionStartedAt: presented.sessionStartedAt,
    authMethods: presented.authMethods,
  });
}

/** The presented token as rotation left it: the row was read before the update revoked it. */
function asRevoked(token: RefreshToken, revocation: Revocation): RefreshToken {
  return Object.assign(token, revokedColumns(revocation), {
    replacedByTokenId: revocation.replacedByTokenId ?? null,
  });
}

function revokedColumns(revocation: Revocation): Partial<RefreshToken> {
  return {
    isRevoked: true,
    revokedAt: revocation.at,
    revokedByIp: revocation.ip,
    reasonRevoked: revocation.reason,
  };
}

/** The careful path's unit: TypeORM on the unit's transaction. */
class TypeOrmUnit implements RefreshTokenUnit {
  constructor(
    readonly manager: EntityManager,
    private readonly unitOfWork: UnitOfWork,
  ) {}

  async lockByHash(tokenHash: string): Promise<TokenIdentity | null> {
    if (this.unitOfWork.isSerialized) {
      return this.manager.findOne(RefreshToken, {
        select: { id: true, userId: true, familyId: true, generation: true },
        where: { tokenHash },
      });
    }
    // Rotation, reuse detection and revocation of one family never interleave, across
    // instances included.
    const rows = await this.manager.query<(TokenIdentity & { held: boolean })[]>(
      'SELECT "id", "userId", "familyId", "generation", pg_advisory_xact_lock(hashtextextended(' +
        `'${FAMILY_LOCK_PREFIX}' || "familyId", 0)) IS NULL AS "held" ` +
        `FROM "refresh_tokens" WHERE "tokenHash" = $1`,
      [tokenHash],
    );
    return rows.length === 0
      ? null
      : {
          id: rows[0].id,
          userId: rows[0].userId,
          familyId: rows[0].familyId,
          generation: rows[0].generation,
        };
  }

  async findByHash(tokenHash: string): Promise<RefreshToken | null> {
    const token = await this.lockByHash(tokenHash);
    if (token === null || this.unitOfWork.isSerialized) {
      return token === null ? null : this.manager.findOneBy(RefreshToken, { id: token.id });
    }
    // Read again under the lock: the first read may predate a commit.
    return this.manager.findOneBy(RefreshToken, { id: token.id });
  }

  async revokeIfActive(tokenId: string, revocation: Revocation): Promise<boolean> {
    const result = await this.manager.update(
      RefreshToken,
      { id: tokenId, isRevoked: false },
      { ...revokedColumns(revocation), replacedByTokenId: revocation.replacedByTokenId ?? null },
    );
    return result.affected === 1;
  }

  async revokeActiveFrom(
    token: TokenIdentity,
    revocation: Revocation,
    from: 'itself' | 'descendants',
  ): Promise<string[]> {
    const generation = from === 'itself' ? token.generation : token.generation + 1;
    const ids = this.unitOfWork.isSerialized
      ? await this.revokeFromGenerationOnSqlite(token.familyId, generation, revocation)
      : (
          await this.manager.query<[{ id: string }[], number]>(
            'UPDATE "refresh_tokens" SET "isRevoked" = true, "revokedAt" = $1, ' +
              '"revokedByIp" = $2, "reasonRevoked" = $3 WHERE "familyId" = $4 ' +
              'AND "generation" >= $5 AND "isRevoked" = false RETURNING "id"',
            [revocation.at, revocation.ip, revocation.reason, token.familyId, generation],
          )
        )[0].map((row) => row.id);
    return ids.includes(token.id) ? [token.id, ...ids.filter((id) => id !== token.id)] : ids;
  }

  /** Units run one at a time on SQLite: a read and an update cannot be interleaved. */
  private async revokeFromGenerationOnSqlite(
    familyId: string,
    generation: number,
    revocation: Revocation,
  ): Promise<string[]> {
    const active = await this.manager.find(RefreshToken, {
      select: { id: true },
      where: { familyId, generation: MoreThanOrEqual(generation), isRevoked: false },
      order: { generation: 'ASC' },
    });
    const ids = active.map((token) => token.id);
    if (ids.length > 0) {
      await this.manager.update(
        RefreshToken,
        { id: In(ids), isRevoked: false },
        revokedColumns(revocation),
      );
    }
    return ids;
  }

  async insert(token: RefreshToken): Promise<void> {
    await this.manager.insert(RefreshToken, token);
  }
}
