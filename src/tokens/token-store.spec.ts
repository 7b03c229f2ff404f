import type { DataSource } from 'typeorm';
import { createInMemoryDataSource } from '../../test/utils/in-memory-database.js';
import { sqliteConnectionOf } from '../database/driver-handle.js';
import { User } from '../users/entities/user.entity.js';
import { RefreshToken } from './entities/refresh-token.entity.js';
import { SqliteTokenStatements, SqliteTokenStore } from './token-store.js';

const USER: User = {
  id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
  username: 'alice',
  email: 'alice@example.com',
  passwordHash: 'x',
  failedLoginAttempts: 0,
  lockoutEnd: null,
  isActive: true,
  createdAt: new Date('2026-01-01T00:00:00.000Z'),
  lastLoginAt: null,
  emailVerifiedAt: null,
};

function token(overrides: Partial<RefreshToken> = {}): RefreshToken {
  return Object.assign(new RefreshToken(), {
    id: '9b2d6f7e-1c1a-4c55-8f3e-2f7b0d1e6a11',
    tokenHash: 'a'.repeat(64),
    userId: USER.id,
    familyId: '9b2d6f7e-1c1a-4c55-8f3e-2f7b0d1e6a11',
    generation: 3,
    expiresAt: new Date('2026-01-08T00:00:00.123Z'),
    createdAt: new Date('2026-01-01T00:00:00.456Z'),
    createdByIp: '127.0.0.1',
    createdByUserAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0',
    sessionStartedAt: new Date('2025-12-30T10:00:00.789Z'),
    isRevoked: false,
    revokedAt: null,
    revokedByIp: null,
    reasonRevoked: null,
    replacedByTokenId: null,
    authMethods: 'pwd otp',
    ...overrides,
  });
}

describe(SqliteTokenStore.name, () => {
  let dataSource: DataSource;
  let sut: SqliteTokenStore;

  beforeEach(async () => {
    dataSource = await createInMemoryDataSource();
    await dataSource.getRepository(User).insert(USER);
    const db = sqliteConnectionOf(dataSource);
    sut = new SqliteTokenStore(new SqliteTokenStatements(db));
  });

  afterEach(async () => {
    await dataSource.destroy();
  });

  const typeorm = (id: string): Promise<RefreshToken> =>
    dataSource.getRepository(RefreshToken).findOneByOrFail({ id });

  it.each<[string, Partial<RefreshToken>]>([
    ['an active token', {}],
    [
      'a rotated token',
      {
        isRevoked: true,
        revokedAt: new Date('2026-01-02T03:04:05.678Z'),
        revokedByIp: '::1',
        reasonRevoked: 'Replaced by new token',
        replacedByTokenId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
      },
    ],
    ['a token of a client that sent no User-Agent', { createdByUserAgent: null }],
    ['a token issued before sessions recorded how they were authenticated', { authMethods: null }],
  ])('should write and read %s exactly as TypeORM does', async (_case, overrides) => {
    const written = token(overrides);
    await sut.insert(written);

    const stored = await typeorm(written.id);
    expect(stored).toEqual(written);
    await expect(sut.findByHash(written.tokenHash)).resolves.toEqual(stored);
  });

  it('should find the owner as TypeORM hydrates it', async () => {
    await expect(sut.findOwner(USER.id)).resolves.toEqual(
      await dataSource.getRepository(User).findOneByOrFail({ id: USER.id }),
    );
  });

  it('should revoke only an active token, recording the revocation', async () => {
    const written = token();
    await sut.insert(written);
    const revocation = { at: new Date('2026-01-03T00:00:00.001Z'), ip: '10.0.0.1', reason: 'bye' };

    await expect(sut.revokeIfActive(written.id, revocation)).resolves.toBe(true);
    await expect(sut.revokeIfActive(written.id, { ...revocation, reason: 'again' })).resolves.toBe(
      false,
    );

    expect(await typeorm(written.id)).toMatchObject({
      isRevoked: true,
      revokedAt: revocation.at,
      revokedByIp: '10.0.0.1',
      reasonRevoked: 'bye',
      replacedByTokenId: null,
    });
  });

  it('should revoke the active descendants of a token and nothing else', async () => {
    const family = '11111111-1111-4111-8111-111111111111';
    const members = [0, 1, 2, 3].map((generation) =>
      token({
        id: `11111111-1111-4111-8111-11111111111${generation}`,
        tokenHash: String(generation).repeat(64),
        familyId: family,
        generation,
        isRevoked: generation < 2,
      }),
    );
    for (const member of members) {
      await sut.insert(member);
    }
    const revocation = {
      at: new Date('2026-01-03T00:00:00.000Z'),
      ip: '::1',
      reason: 'Token reuse detectado',
    };

    const revoked = await sut.revokeActiveDescendants(members[1], revocation);

    expect([...revoked].sort()).toEqual([members[2].id, members[3].id]);

    const after = await Promise.all(members.map((member) => typeorm(member.id)));
    expect(after.map((member) => member.reasonRevoked)).toEqual([
      null,
      null,
      'Token reuse detectado',
      'Token reuse detectado',
    ]);
  });
});
