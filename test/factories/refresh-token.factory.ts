import { randomUUID } from 'node:crypto';
import { RefreshToken } from '../../src/tokens/entities/refresh-token.entity.js';
import { hashRefreshToken } from '../../src/tokens/refresh-token-value.js';
import type { TestApp } from '../utils/create-test-app.js';

/** Reads the stored record of a raw refresh token, or null. */
export function findRefreshToken(testApp: TestApp, raw: string): Promise<RefreshToken | null> {
  return testApp.dataSource
    .getRepository(RefreshToken)
    .findOneBy({ tokenHash: hashRefreshToken(raw) });
}

/** Every token of a family, oldest first. */
export function findFamily(testApp: TestApp, familyId: string): Promise<RefreshToken[]> {
  return testApp.dataSource
    .getRepository(RefreshToken)
    .find({ where: { familyId }, order: { generation: 'ASC' } });
}

/** Persists a refresh token for `userId` with a known raw value, and returns that value. */
export async function createRefreshToken(
  testApp: TestApp,
  userId: string,
  overrides: Partial<RefreshToken> = {},
): Promise<{ raw: string; token: RefreshToken }> {
  const raw = randomUUID() + randomUUID();
  const id = randomUUID();
  const now = testApp.clock.now();
  const token = Object.assign(new RefreshToken(), {
    id,
    tokenHash: hashRefreshToken(raw),
    userId,
    familyId: id,
    generation: 0,
    createdAt: now,
    createdByIp: '127.0.0.1',
    createdByUserAgent: null,
    // A token of its own family starts its session when it is created.
    sessionStartedAt: overrides.createdAt ?? now,
    expiresAt: new Date(now.getTime() + 7 * 24 * 60 * 60 * 1000),
    isRevoked: false,
    revokedAt: null,
    revokedByIp: null,
    reasonRevoked: null,
    replacedByTokenId: null,
    ...overrides,
  });
  await testApp.dataSource.getRepository(RefreshToken).insert(token);
  return { raw, token };
}
