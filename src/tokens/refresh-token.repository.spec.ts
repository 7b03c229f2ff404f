import type { DataSource } from 'typeorm';
import { createInMemoryDataSource } from '../../test/utils/in-memory-database.js';
import { User } from '../users/entities/user.entity.js';
import { RefreshToken } from './entities/refresh-token.entity.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { RandomSource } from '../common/random/random-source.js';
import { AuditEventRepository } from '../audit/audit-event.repository.js';
import {
  RefreshTokenRepository,
  type RotationAudit,
  type SuccessorToken,
} from './refresh-token.repository.js';

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
    authMethods: 'pwd',
    ...overrides,
  });
}

const AT = new Date('2026-01-02T00:00:00.250Z');

function successor(overrides: Partial<SuccessorToken> = {}): SuccessorToken {
  return {
    id: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
    tokenHash: 'b'.repeat(64),
    expiresAt: new Date('2026-01-09T00:00:00.250Z'),
    createdAt: AT,
    createdByIp: '198.51.100.9',
    createdByUserAgent: 'curl/8.5.0',
    isRevoked: false,
    revokedAt: null,
    revokedByIp: null,
    reasonRevoked: null,
    replacedByTokenId: null,
    ...overrides,
  };
}

const rotation = (presented: RefreshToken, own = successor()) =>
  [
    presented.tokenHash,
    own,
    { at: AT, ip: own.createdByIp, reason: 'Replaced by new token', replacedByTokenId: own.id },
    { ownerVerified: false },
    NO_AUDIT,
  ] as const;

/** The rotation's audit row is AuthEvents' business (tested there and end to end). */
const NO_AUDIT: RotationAudit = {
  withinSqlite: () => undefined,
  refreshedRecord: () => {
    throw new Error('not on SQLite');
  },
};

describe(RefreshTokenRepository.name, () => {
  let dataSource: DataSource;
  let sut: RefreshTokenRepository;

  beforeEach(async () => {
    dataSource = await createInMemoryDataSource();
    await dataSource.getRepository(User).insert(USER);
    sut = new RefreshTokenRepository(
      new UnitOfWork(dataSource),
      dataSource,
      new AuditEventRepository(new UnitOfWork(dataSource), dataSource, new RandomSource()),
    );
  });

  afterEach(async () => {
    await dataSource.destroy();
  });

  const typeorm = (id: string): Promise<RefreshToken> =>
    dataSource.getRepository(RefreshToken).findOneByOrFail({ id });
  const store = (written: RefreshToken): Promise<unknown> =>
    dataSource.getRepository(RefreshToken).insert(written);

  it.each<[string, Partial<SuccessorToken>, Partial<RefreshToken>]>([
    ['a token with a User-Agent', {}, {}],
    ['a token of a client that sent no User-Agent', { createdByUserAgent: null }, {}],
    ['a token of a session signed in with a second factor', {}, { authMethods: 'pwd otp' }],
    ['a token of a session from before amr was recorded', {}, { authMethods: null }],
  ])(
    'should rotate into %s written exactly as TypeORM reads it back, reading what TypeORM reads',
    async (_case, overrides, presentedOverrides) => {
      const presented = token(presentedOverrides);
      await store(presented);
      const own = successor(overrides);

      const result = await sut.rotate(...rotation(presented, own));

      const owner = await dataSource.getRepository(User).findOneByOrFail({ id: USER.id });
      const revoked = await typeorm(presented.id);
      expect(revoked).toMatchObject({
        isRevoked: true,
        revokedAt: AT,
        revokedByIp: own.createdByIp,
        reasonRevoked: 'Replaced by new token',
        replacedByTokenId: own.id,
      });
      const next = await typeorm(own.id);
      expect(next).toStrictEqual(
        Object.assign(new RefreshToken(), own, {
          userId: presented.userId,
          familyId: presented.familyId,
          generation: presented.generation + 1,
          sessionStartedAt: presented.sessionStartedAt,
          authMethods: presented.authMethods,
        }),
      );
      expect(result).toEqual({ rotated: true, presented: revoked, owner, successor: next });
    },
  );

  it.each<[string, Partial<RefreshToken>, Partial<User>, boolean]>([
    [
      'a revoked token',
      { isRevoked: true, revokedAt: AT, revokedByIp: '::1', reasonRevoked: 'x' },
      {},
      false,
    ],
    ['an expired token', { expiresAt: AT }, {}, false],
    ['a token of a deactivated account', {}, { isActive: false }, false],
    ['a token of an unverified account when verification is required', {}, {}, true],
  ])(
    'should not rotate %s, and return what it read',
    async (_case, tokenFields, userFields, ownerVerified) => {
      if (Object.keys(userFields).length > 0) {
        await dataSource.getRepository(User).update({ id: USER.id }, userFields);
      }
      const presented = token(tokenFields);
      await store(presented);
      const [hash, own, revocation] = rotation(presented);

      const result = await sut.rotate(hash, own, revocation, { ownerVerified }, NO_AUDIT);

      expect(result).toEqual({
        rotated: false,
        presented: await typeorm(presented.id),
        owner: await dataSource.getRepository(User).findOneByOrFail({ id: USER.id }),
      });
      await expect(dataSource.getRepository(RefreshToken).count()).resolves.toBe(1);
    },
  );

  it('should read nothing for an unknown digest', async () => {
    await expect(sut.rotate(...rotation(token()))).resolves.toEqual({
      rotated: false,
      presented: null,
      owner: null,
    });
  });

  it('should revoke only an active token, recording the revocation', async () => {
    const written = token();
    await store(written);
    const revocation = { at: new Date('2026-01-03T00:00:00.001Z'), ip: '10.0.0.1', reason: 'bye' };

    const [first, second] = await sut.atomically(async (unit) => [
      await unit.revokeIfActive(written.id, revocation),
      await unit.revokeIfActive(written.id, { ...revocation, reason: 'again' }),
    ]);

    expect([first, second]).toEqual([true, false]);
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
      await store(member);
    }
    const revocation = {
      at: new Date('2026-01-03T00:00:00.000Z'),
      ip: '::1',
      reason: 'Token reuse detectado',
    };

    const revoked = await sut.atomically((unit) =>
      unit.revokeActiveFrom(members[1], revocation, 'descendants'),
    );

    expect([...revoked].sort()).toEqual([members[2].id, members[3].id]);
    const after = await Promise.all(members.map((member) => typeorm(member.id)));
    expect(after.map((member) => member.reasonRevoked)).toEqual([
      null,
      null,
      'Token reuse detectado',
      'Token reuse detectado',
    ]);
  });

  it('should read the newest token of a family as TypeORM hydrates it', async () => {
    const older = token({ generation: 1, isRevoked: true });
    const newest = token({ id: '22222222-2222-4222-8222-222222222222', tokenHash: 'c'.repeat(64) });
    await store(older);
    await store(newest);

    const read = await sut.newestOfFamily(newest.familyId);

    const expected = await typeorm(newest.id);
    expect(read).toMatchObject({
      userId: expected.userId,
      isRevoked: expected.isRevoked,
      expiresAt: expected.expiresAt,
    });
    expect(read?.isActiveAt(AT)).toBe(true);
  });
});
