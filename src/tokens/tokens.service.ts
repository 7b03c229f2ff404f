import { Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { AuthResponseDto } from '../auth/dto/auth-response.dto.js';
import { UnauthorizedError } from '../common/errors/domain-errors.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/app-config.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { UserResponseDto } from '../users/dto/user-response.dto.js';
import type { User } from '../users/entities/user.entity.js';
import { UsersMessages } from '../users/users.messages.js';
import { UsersService } from '../users/users.service.js';
import { AccessTokenService } from './access-token.service.js';
import type { MessageResponseDto } from './dto/message-response.dto.js';
import type { RevokeDto } from './dto/revoke.dto.js';
import { RefreshToken } from './entities/refresh-token.entity.js';
import { generateRefreshTokenValue, hashRefreshToken } from './refresh-token-value.js';
import {
  SqliteTokenStatements,
  SqliteTokenStore,
  TypeOrmTokenStore,
  type TokenStore,
} from './token-store.js';
import { TokensMessages } from './tokens.messages.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** What a refresh attempt found, decided inside one unit of work and acted on outside it. */
type RefreshOutcome =
  | { readonly kind: 'rotated'; readonly response: AuthResponseDto }
  | { readonly kind: 'invalid' | 'expired' | 'deactivated' }
  | { readonly kind: 'reused'; readonly userId: string; readonly revokedDescendants: number };

/** Refresh tokens: issuing, rotation with reuse detection, and revocation. */
@Injectable()
export class TokensService {
  private readonly logger = new Logger(TokensService.name);
  private readonly refreshLifetimeMs: number;
  private sqliteStatements: SqliteTokenStatements | undefined;

  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly usersService: UsersService,
    private readonly accessTokens: AccessTokenService,
    private readonly clock: Clock,
    config: AppConfig,
  ) {
    this.refreshLifetimeMs = config.jwt.refreshTokenExpiryDays * DAY_MS;
  }

  /**
   * Starts a new token family for `user` and returns the auth response. Runs inside the
   * caller's transaction so that the login or registration and its token commit together.
   */
  async issue(user: User, ip: string, manager: EntityManager): Promise<AuthResponseDto> {
    const familyId = randomUUID();
    const store = new TypeOrmTokenStore(manager, this.unitOfWork, this.usersService);
    const raw = await this.insertToken(store, {
      id: familyId,
      userId: user.id,
      familyId,
      generation: 0,
      ip,
    });
    return this.respond(user, raw);
  }

  /** Spec §3.2: rotates a valid token, or says why not. */
  async refresh(rawToken: string, ip: string): Promise<AuthResponseDto> {
    const tokenHash = hashRefreshToken(rawToken);
    const outcome = await this.withStore(async (store): Promise<RefreshOutcome> => {
      const now = this.clock.now();
      const token = await store.findByHash(tokenHash);
      if (token === null) {
        return { kind: 'invalid' };
      }
      if (token.isRevoked) {
        const revokedDescendants = await store.revokeActiveDescendants(token, {
          at: now,
          ip,
          reason: TokensMessages.reuseDetectedReason,
        });
        return { kind: 'reused', userId: token.userId, revokedDescendants };
      }
      if (token.hasExpiredAt(now)) {
        return { kind: 'expired' };
      }
      const user = await store.findOwner(token.userId);
      if (user === null) {
        return { kind: 'invalid' };
      }
      if (!user.isActive) {
        return { kind: 'deactivated' };
      }
      return { kind: 'rotated', response: await this.rotate(store, token, user, now, ip) };
    });
    return this.settle(outcome);
  }

  /**
   * Spec §4.2 revoke. A token that is not the bearer's is treated as not found. Revoking an
   * already revoked token succeeds and keeps the first revocation's reason and IP; if it had
   * been rotated, the session it led to is ended too, so a logout always logs out.
   */
  async revoke(userId: string, request: RevokeDto, ip: string): Promise<MessageResponseDto> {
    const tokenHash = hashRefreshToken(request.refreshToken);
    const reason = request.reason ?? TokensMessages.defaultRevokeReason;
    const found = await this.withStore(async (store) => {
      const token = await store.findByHash(tokenHash);
      if (token === null || token.userId !== userId) {
        return false;
      }
      const revocation = { at: this.clock.now(), ip, reason };
      await store.revokeIfActive(token.id, revocation);
      await store.revokeActiveDescendants(token, revocation);
      return true;
    });
    if (!found) {
      throw new UnauthorizedError(TokensMessages.invalid);
    }
    this.logger.log(`Refresh token revoked for user ${userId}`);
    return { message: TokensMessages.revokedOk };
  }

  /**
   * Runs `work` atomically on the token store: prepared statements on SQLite, where refresh is a
   * hot path, and TypeORM on PostgreSQL.
   */
  private withStore<T>(work: (store: TokenStore) => Promise<T>): Promise<T> {
    if (this.unitOfWork.isSerialized) {
      return this.unitOfWork.transactionOnSqlite((db) => {
        this.sqliteStatements ??= new SqliteTokenStatements(db);
        return work(new SqliteTokenStore(this.sqliteStatements));
      });
    }
    return this.unitOfWork.transaction((m) =>
      work(new TypeOrmTokenStore(m, this.unitOfWork, this.usersService)),
    );
  }

  private async rotate(
    store: TokenStore,
    token: RefreshToken,
    user: User,
    now: Date,
    ip: string,
  ): Promise<AuthResponseDto> {
    const id = randomUUID();
    const revoked = await store.revokeIfActive(token.id, {
      at: now,
      ip,
      reason: TokensMessages.replacedReason,
      replacedByTokenId: id,
    });
    if (!revoked) {
      // Another writer revoked it between our read and this update: never issue a second child.
      throw new Error('Refresh token changed while it was being rotated');
    }
    const raw = await this.insertToken(store, {
      id,
      userId: user.id,
      familyId: token.familyId,
      generation: token.generation + 1,
      ip,
    });
    return this.respond(user, raw);
  }

  private async insertToken(
    store: TokenStore,
    fields: Pick<RefreshToken, 'id' | 'userId' | 'familyId' | 'generation'> & { ip: string },
  ): Promise<string> {
    const now = this.clock.now();
    const { raw, hash } = generateRefreshTokenValue();
    await store.insert(
      Object.assign(new RefreshToken(), {
        id: fields.id,
        tokenHash: hash,
        userId: fields.userId,
        familyId: fields.familyId,
        generation: fields.generation,
        createdAt: now,
        createdByIp: fields.ip,
        expiresAt: new Date(now.getTime() + this.refreshLifetimeMs),
        isRevoked: false,
        revokedAt: null,
        revokedByIp: null,
        reasonRevoked: null,
        replacedByTokenId: null,
      }),
    );
    return raw;
  }

  private respond(user: User, refreshToken: string): AuthResponseDto {
    const access = this.accessTokens.sign(user);
    return {
      accessToken: access.token,
      refreshToken,
      accessTokenExpiry: access.expiresAt.toISOString(),
      user: UserResponseDto.from(user),
    };
  }

  private settle(outcome: RefreshOutcome): AuthResponseDto {
    switch (outcome.kind) {
      case 'rotated':
        return outcome.response;
      case 'invalid':
        throw new UnauthorizedError(TokensMessages.invalid);
      case 'expired':
        throw new UnauthorizedError(TokensMessages.expired);
      case 'deactivated':
        throw new UnauthorizedError(UsersMessages.deactivated);
      case 'reused':
        this.logger.warn(
          `Refresh token reuse detected for user ${outcome.userId}: ` +
            `${outcome.revokedDescendants} descendant token(s) revoked`,
        );
        throw new UnauthorizedError(TokensMessages.revoked);
    }
  }
}
