import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { RefreshToken } from '../../src/tokens/entities/refresh-token.entity.js';
import { Session } from '../../src/tokens/entities/session.entity.js';
import { hashRefreshToken } from '../../src/tokens/storage/refresh-token-value.js';
import { TokensMessages } from '../../src/tokens/tokens.messages.js';
import type { TestApp } from '../utils/create-test-app.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Jwt__RefreshTokenExpiryDays in the tests. */
const REFRESH_LIFETIME_MS = 7 * DAY_MS;

/**
 * What spec §2.2 says of a stored refresh token, read from its row and its session's (decision
 * 0027): a rotated token (an older generation) was revoked when its successor was created, from
 * where it was created, "Replaced by new token"; the newest is revoked when its session ended.
 * `id` names the token as the service does: session and generation.
 */
export interface TokenView {
  readonly id: string;
  readonly familyId: string;
  readonly generation: number;
  readonly userId: string;
  readonly createdAt: Date;
  /** The newest token's; null for a rotated one (its successor's IP is its revocation's). */
  readonly createdByIp: string | null;
  readonly createdByUserAgent: string | null;
  readonly sessionStartedAt: Date;
  readonly authMethods: string | null;
  readonly expiresAt: Date;
  readonly isRevoked: boolean;
  readonly revokedAt: Date | null;
  readonly revokedByIp: string | null;
  readonly reasonRevoked: string | null;
  /** The successor's name, for a rotated token. */
  readonly replacedByTokenId: string | null;
}

/**
 * A token's name: its session and generation. The first token's is the session id, as the first
 * token's id was the family id before decision 0027.
 */
export function tokenName(sessionId: string, generation: number): string {
  return generation === 0 ? sessionId : `${sessionId}#${generation}`;
}

/** Reads the stored record of a raw refresh token, or null. */
export function findRefreshToken(testApp: TestApp, raw: string): Promise<TokenView | null> {
  return storedTokenView(testApp.dataSource, raw);
}

/** findRefreshToken on a data source. */
export async function storedTokenView(
  dataSource: DataSource,
  raw: string,
): Promise<TokenView | null> {
  const token = await dataSource
    .getRepository(RefreshToken)
    .findOneBy({ tokenHash: hashRefreshToken(raw) });
  return token === null ? null : viewOf(dataSource, token);
}

/** The session `id`'s row, or null. */
export function findSession(testApp: TestApp, id: string): Promise<Session | null> {
  return testApp.dataSource.getRepository(Session).findOneBy({ id });
}

/** Every token of a family (session), oldest first. */
export function findFamily(testApp: TestApp, familyId: string): Promise<TokenView[]> {
  return familyView(testApp.dataSource, familyId);
}

/** findFamily on a data source. */
export async function familyView(dataSource: DataSource, familyId: string): Promise<TokenView[]> {
  const tokens = await dataSource
    .getRepository(RefreshToken)
    .find({ where: { sessionId: familyId }, order: { generation: 'ASC' } });
  return Promise.all(tokens.map((token) => viewOf(dataSource, token)));
}

async function viewOf(dataSource: DataSource, token: RefreshToken): Promise<TokenView> {
  const session = await dataSource.getRepository(Session).findOneByOrFail({ id: token.sessionId });
  const successor = await dataSource.getRepository(RefreshToken).findOneBy({
    sessionId: token.sessionId,
    generation: token.generation + 1,
  });
  const newest = token.generation === session.generation;
  const rotatedAt = successor?.createdAt ?? session.lastUsedAt;
  return {
    id: tokenName(token.sessionId, token.generation),
    familyId: token.sessionId,
    generation: token.generation,
    userId: session.userId,
    createdAt: token.createdAt,
    createdByIp: newest ? session.lastIp : null,
    createdByUserAgent: newest ? session.lastUserAgent : null,
    sessionStartedAt: session.startedAt,
    authMethods: session.authMethods,
    expiresAt: newest
      ? session.expiresAt
      : new Date(token.createdAt.getTime() + REFRESH_LIFETIME_MS),
    isRevoked: !newest || session.endedAt !== null,
    revokedAt: newest ? session.endedAt : rotatedAt,
    revokedByIp: newest
      ? session.endedByIp
      : token.generation + 1 === session.generation
        ? session.lastIp
        : null,
    reasonRevoked: newest ? session.endReason : TokensMessages.replacedReason,
    replacedByTokenId: newest ? null : tokenName(token.sessionId, token.generation + 1),
  };
}

/** What a test may say of the token it makes, in spec §2.2's terms. */
export interface TokenOverrides {
  readonly familyId?: string;
  readonly createdAt?: Date;
  readonly expiresAt?: Date;
  readonly createdByIp?: string;
  readonly createdByUserAgent?: string | null;
  readonly sessionStartedAt?: Date;
  readonly authMethods?: string | null;
  readonly isRevoked?: boolean;
  readonly revokedAt?: Date | null;
  readonly revokedByIp?: string | null;
  readonly reasonRevoked?: string | null;
}

/**
 * Persists a session of its own for `userId` with one token of a known raw value, and returns
 * that value. A revoked token is the newest of an ended session.
 */
export async function createRefreshToken(
  testApp: TestApp,
  userId: string,
  overrides: TokenOverrides = {},
): Promise<{ raw: string; token: TokenView }> {
  const raw = randomUUID() + randomUUID();
  const id = overrides.familyId ?? randomUUID();
  const now = testApp.clock.now();
  const createdAt = overrides.createdAt ?? now;
  const revoked = overrides.isRevoked ?? false;
  const expiresAt = overrides.expiresAt ?? new Date(now.getTime() + REFRESH_LIFETIME_MS);
  const session = Object.assign(new Session(), {
    id,
    userId,
    startedAt: overrides.sessionStartedAt ?? createdAt,
    authMethods: overrides.authMethods ?? null,
    generation: 0,
    lastUsedAt: createdAt,
    lastIp: overrides.createdByIp ?? '127.0.0.1',
    lastUserAgent: overrides.createdByUserAgent ?? null,
    expiresAt,
    // As the service's rows are: no token older than a lifetime before the session's expiry.
    oldestTokenAt: new Date(
      Math.min(createdAt.getTime(), expiresAt.getTime() - REFRESH_LIFETIME_MS),
    ),
    endedAt: revoked ? (overrides.revokedAt ?? now) : null,
    endedByIp: revoked ? (overrides.revokedByIp ?? '127.0.0.1') : null,
    endReason: revoked ? (overrides.reasonRevoked ?? 'Revocado') : null,
  });
  await testApp.dataSource.getRepository(Session).insert(session);
  const token = Object.assign(new RefreshToken(), {
    tokenHash: hashRefreshToken(raw),
    sessionId: id,
    generation: 0,
    createdAt,
  });
  await testApp.dataSource.getRepository(RefreshToken).insert(token);
  return { raw, token: await viewOf(testApp.dataSource, token) };
}

/** Every token of `userId`'s sessions, by session id then generation. */
export async function findTokensOfUser(testApp: TestApp, userId: string): Promise<TokenView[]> {
  const sessions = await testApp.dataSource
    .getRepository(Session)
    .find({ where: { userId }, order: { id: 'ASC' } });
  const families = await Promise.all(sessions.map((session) => findFamily(testApp, session.id)));
  return families.flat();
}
