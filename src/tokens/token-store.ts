import type { Database, Statement } from 'better-sqlite3';
import { In, MoreThan, type EntityManager } from 'typeorm';
import { fromSqliteDatetime, toSqliteDatetime } from '../database/sqlite-datetime.js';
import type { UnitOfWork } from '../database/unit-of-work.js';
import type { User } from '../users/entities/user.entity.js';
import {
  SELECT_USER_BY_ID_SQLITE,
  userFromSqliteRow,
  type SqliteUserRow,
} from '../users/user-row.js';
import type { UsersService } from '../users/users.service.js';
import { RefreshToken } from './entities/refresh-token.entity.js';

/** What a revocation records. */
export interface Revocation {
  readonly at: Date;
  readonly ip: string;
  readonly reason: string;
  /** Set by rotation: the token that replaces this one. */
  readonly replacedByTokenId?: string;
}

/**
 * The reads and writes of rotation, reuse detection and revocation, inside one unit of work.
 * TokensService holds the rules and runs them on either implementation: TypeORM (PostgreSQL,
 * and wherever a caller's transaction is in use) or prepared statements (SQLite's hot path).
 */
export interface TokenStore {
  /** On PostgreSQL also locks the token's family until the unit ends. */
  findByHash(tokenHash: string): Promise<RefreshToken | null>;
  findOwner(userId: string): Promise<User | null>;
  /** Revokes the token if it is still active; false when it was not. */
  revokeIfActive(tokenId: string, revocation: Revocation): Promise<boolean>;
  /** Revokes the still-active tokens rotated out of `token`; returns their ids. */
  revokeActiveDescendants(token: RefreshToken, revocation: Revocation): Promise<string[]>;
  insert(token: RefreshToken): Promise<void>;
}

export class TypeOrmTokenStore implements TokenStore {
  constructor(
    private readonly m: EntityManager,
    private readonly unitOfWork: UnitOfWork,
    private readonly usersService: UsersService,
  ) {}

  async findByHash(tokenHash: string): Promise<RefreshToken | null> {
    const token = await this.m.findOneBy(RefreshToken, { tokenHash });
    if (token === null || this.unitOfWork.isSerialized) {
      return token;
    }
    // Rotation, reuse detection and revocation of one family never interleave, across
    // instances included; read again under the lock, the first read may predate a commit.
    await this.unitOfWork.lock(this.m, familyLockKey(token.familyId));
    return this.m.findOneBy(RefreshToken, { id: token.id });
  }

  findOwner(userId: string): Promise<User | null> {
    return this.usersService.findById(userId, this.m);
  }

  async revokeIfActive(tokenId: string, revocation: Revocation): Promise<boolean> {
    const result = await this.m.update(
      RefreshToken,
      { id: tokenId, isRevoked: false },
      { ...revokedColumns(revocation), replacedByTokenId: revocation.replacedByTokenId ?? null },
    );
    return result.affected === 1;
  }

  async revokeActiveDescendants(token: RefreshToken, revocation: Revocation): Promise<string[]> {
    // Two statements are safe here: findByHash holds the family's lock until the unit ends.
    const descendants = await this.m.find(RefreshToken, {
      select: { id: true },
      where: { familyId: token.familyId, generation: MoreThan(token.generation), isRevoked: false },
    });
    const ids = descendants.map((descendant) => descendant.id);
    if (ids.length > 0) {
      await this.m.update(
        RefreshToken,
        { id: In(ids), isRevoked: false },
        revokedColumns(revocation),
      );
    }
    return ids;
  }

  async insert(token: RefreshToken): Promise<void> {
    await this.m.insert(RefreshToken, token);
  }
}

/** The advisory lock that makes the changes of one token family take turns on PostgreSQL. */
export function familyLockKey(familyId: string): string {
  return `refresh-family:${familyId}`;
}

export function revokedColumns(revocation: Revocation): Partial<RefreshToken> {
  return {
    isRevoked: true,
    revokedAt: revocation.at,
    revokedByIp: revocation.ip,
    reasonRevoked: revocation.reason,
  };
}

interface SqliteTokenRow {
  readonly id: string;
  readonly tokenHash: string;
  readonly userId: string;
  readonly familyId: string;
  readonly generation: number;
  readonly expiresAt: string;
  readonly createdAt: string;
  readonly createdByIp: string;
  readonly createdByUserAgent: string | null;
  readonly sessionStartedAt: string;
  readonly isRevoked: number;
  readonly revokedAt: string | null;
  readonly revokedByIp: string | null;
  readonly reasonRevoked: string | null;
  readonly replacedByTokenId: string | null;
  readonly authMethods: string | null;
}

const TOKEN_COLUMNS =
  '"id", "tokenHash", "userId", "familyId", "generation", "expiresAt", "createdAt", ' +
  '"createdByIp", "createdByUserAgent", "sessionStartedAt", "isRevoked", "revokedAt", ' +
  '"revokedByIp", "reasonRevoked", "replacedByTokenId", "authMethods"';

/** The prepared statements of SqliteTokenStore, compiled once per connection. */
export class SqliteTokenStatements {
  readonly byHash: Statement<[string], SqliteTokenRow>;
  readonly userById: Statement<[string], SqliteUserRow>;
  readonly revokeIfActive: Statement<[string, string, string, string | null, string]>;
  readonly revokeDescendants: Statement<[string, string, string, string, number], { id: string }>;
  readonly insert: Statement<unknown[]>;

  constructor(db: Database) {
    this.byHash = db.prepare(`SELECT ${TOKEN_COLUMNS} FROM "refresh_tokens" WHERE "tokenHash" = ?`);
    this.userById = db.prepare(SELECT_USER_BY_ID_SQLITE);
    this.revokeIfActive = db.prepare(
      'UPDATE "refresh_tokens" SET "isRevoked" = 1, "revokedAt" = ?, "revokedByIp" = ?, ' +
        '"reasonRevoked" = ?, "replacedByTokenId" = ? WHERE "id" = ? AND "isRevoked" = 0',
    );
    this.revokeDescendants = db.prepare(
      'UPDATE "refresh_tokens" SET "isRevoked" = 1, "revokedAt" = ?, "revokedByIp" = ?, ' +
        '"reasonRevoked" = ? WHERE "familyId" = ? AND "generation" > ? AND "isRevoked" = 0 ' +
        'RETURNING "id"',
    );
    this.insert = db.prepare(
      `INSERT INTO "refresh_tokens" (${TOKEN_COLUMNS}) ` +
        'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
  }
}

/** Prepared statements on SQLite's shared connection; run only inside a serialized unit. */
export class SqliteTokenStore implements TokenStore {
  constructor(private readonly statements: SqliteTokenStatements) {}

  findByHash(tokenHash: string): Promise<RefreshToken | null> {
    const row = this.statements.byHash.get(tokenHash);
    return Promise.resolve(row === undefined ? null : tokenFromSqliteRow(row));
  }

  findOwner(userId: string): Promise<User | null> {
    const row = this.statements.userById.get(userId);
    return Promise.resolve(row === undefined ? null : userFromSqliteRow(row));
  }

  revokeIfActive(tokenId: string, revocation: Revocation): Promise<boolean> {
    const { changes } = this.statements.revokeIfActive.run(
      toSqliteDatetime(revocation.at),
      revocation.ip,
      revocation.reason,
      revocation.replacedByTokenId ?? null,
      tokenId,
    );
    return Promise.resolve(changes === 1);
  }

  revokeActiveDescendants(token: RefreshToken, revocation: Revocation): Promise<string[]> {
    const rows = this.statements.revokeDescendants.all(
      toSqliteDatetime(revocation.at),
      revocation.ip,
      revocation.reason,
      token.familyId,
      token.generation,
    );
    return Promise.resolve(rows.map((row) => row.id));
  }

  insert(token: RefreshToken): Promise<void> {
    this.statements.insert.run(
      token.id,
      token.tokenHash,
      token.userId,
      token.familyId,
      token.generation,
      toSqliteDatetime(token.expiresAt),
      toSqliteDatetime(token.createdAt),
      token.createdByIp,
      token.createdByUserAgent,
      toSqliteDatetime(token.sessionStartedAt),
      token.isRevoked ? 1 : 0,
      token.revokedAt === null ? null : toSqliteDatetime(token.revokedAt),
      token.revokedByIp,
      token.reasonRevoked,
      token.replacedByTokenId,
      token.authMethods,
    );
    return Promise.resolve();
  }
}

/** The entity TypeORM would hydrate from the same row (see token-store.spec.ts). */
export function tokenFromSqliteRow(row: SqliteTokenRow): RefreshToken {
  return Object.assign(new RefreshToken(), {
    ...row,
    expiresAt: fromSqliteDatetime(row.expiresAt),
    createdAt: fromSqliteDatetime(row.createdAt),
    sessionStartedAt: fromSqliteDatetime(row.sessionStartedAt),
    isRevoked: row.isRevoked === 1,
    revokedAt: fromSqliteDatetime(row.revokedAt),
  });
}
