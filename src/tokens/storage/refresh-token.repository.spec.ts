import type { DataSource } from 'typeorm';
import { createInMemoryDataSource } from '../../../test/utils/in-memory-database.js';
import { User } from '../../users/entities/user.entity.js';
import { RefreshToken } from '../entities/refresh-token.entity.js';
import { Session } from '../entities/session.entity.js';
import { UnitOfWork } from '../../database/unit-of-work.js';
import { RandomSource } from '../../common/random/random-source.js';
import { AuditEventRepository } from '../../audit/audit-event.repository.js';
import { RefreshTokenRepository, type RotationAudit } from './refresh-token.repository.js';
import { SessionRepository, type SessionUse } from './session.repository.js';
import { WebhookDeliveryRepository } from '../../webhooks/webhook-delivery.repository.js';

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

const SESSION_ID = '9b2d6f7e-1c1a-4c55-8f3e-2f7b0d1e6a11';
const AT = new Date('2026-01-02T00:00:00.250Z');
const digest = (fill: string): Buffer => Buffer.alloc(32, fill);

function session(overrides: Partial<Session> = {}): Session {
  return Object.assign(new Session(), {
    id: SESSION_ID,
    userId: USER.id,
    startedAt: new Date('2025-12-30T10:00:00.789Z'),
    authMethods: 'pwd',
    generation: 3,
    lastUsedAt: new Date('2026-01-01T00:00:00.456Z'),
    lastIp: '127.0.0.1',
    lastUserAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0',
    expiresAt: new Date('2026-01-08T00:00:00.123Z'),
    oldestTokenAt: new Date('2025-12-30T10:00:00.789Z'),
    endedAt: null,
    endedByIp: null,
    endReason: null,
    ...overrides,
  });
}

function token(generation: number, fill = String(generation)): RefreshToken {
  return Object.assign(new RefreshToken(), {
    tokenHash: digest(fill),
    sessionId: SESSION_ID,
    generation,
    createdAt: new Date(Date.UTC(2026, 0, 1, generation)),
  });
}

const USE: SessionUse = {
  at: AT,
  ip: '198.51.100.9',
  userAgent: 'curl/8.5.0',
  expiresAt: new Date('2026-01-09T00:00:00.250Z'),
};

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
    const unitOfWork = new UnitOfWork(dataSource);
    sut = new RefreshTokenRepository(
      unitOfWork,
      dataSource,
      new AuditEventRepository(unitOfWork, dataSource, new RandomSource()),
      new SessionRepository(unitOfWork, dataSource),
      new WebhookDeliveryRepository(unitOfWork, dataSource),
    );
  });

  afterEach(async () => {
    await dataSource.destroy();
  });

  const stored = (): Promise<Session> =>
    dataSource.getRepository(Session).findOneByOrFail({ id: SESSION_ID });
  const tokens = (): Promise<RefreshToken[]> =>
    dataSource.getRepository(RefreshToken).find({ order: { generation: 'ASC' } });
  const store = async (written: Session, ...chain: RefreshToken[]): Promise<void> => {
    await dataSource.getRepository(Session).insert(written);
    await dataSource.getRepository(RefreshToken).insert(chain);
  };

  it.each<[string, Partial<Session>, Partial<SessionUse>]>([
    ['a session with a User-Agent', {}, {}],
    ['a client that sent no User-Agent', {}, { userAgent: null }],
    ['a session signed in with a second factor', { authMethods: 'pwd otp' }, {}],
  ])(
    'should rotate %s: the session moves in place, the successor is stored as TypeORM reads it',
    async (_case, sessionFields, useFields) => {
      const before = session(sessionFields);
      await store(before, token(2), token(3));
      const use = { ...USE, ...useFields };

      const result = await sut.rotate(
        digest('3'),
        digest('n'),
        use,
        { ownerVerified: false },
        NO_AUDIT,
      );

      expect(await stored()).toStrictEqual(
        Object.assign(new Session(), before, {
          generation: 4,
          lastUsedAt: use.at,
          lastIp: use.ip,
          lastUserAgent: use.userAgent,
          expiresAt: use.expiresAt,
        }),
      );
      expect((await tokens()).at(-1)).toStrictEqual(
        Object.assign(new RefreshToken(), {
          tokenHash: digest('n'),
          sessionId: SESSION_ID,
          generation: 4,
          createdAt: use.at,
        }),
      );
      expect(result).toEqual({
        rotated: true,
        presented: { token: token(3), session: before },
        owner: await dataSource.getRepository(User).findOneByOrFail({ id: USER.id }),
      });
    },
  );

  it.each<[string, Partial<Session>, string, Partial<User>, boolean]>([
    ['a rotated token (an older generation)', {}, '2', {}, false],
    ['the newest token of an ended session', { endedAt: AT, endReason: 'x' }, '3', {}, false],
    ['the newest token of an expired session', { expiresAt: AT }, '3', {}, false],
    ['a token of a deactivated account', {}, '3', { isActive: false }, false],
    ['a token of an unverified account when verification is required', {}, '3', {}, true],
  ])(
    'should not rotate %s, and return what it read',
    async (_case, sessionFields, presented, userFields, ownerVerified) => {
      if (Object.keys(userFields).length > 0) {
        await dataSource.getRepository(User).update({ id: USER.id }, userFields);
      }
      const before = session(sessionFields);
      await store(before, token(2), token(3));

      const result = await sut.rotate(
        digest(presented),
        digest('n'),
        USE,
        { ownerVerified },
        NO_AUDIT,
      );

      expect(result).toEqual({
        rotated: false,
        presented: { token: token(Number(presented)), session: before },
        owner: await dataSource.getRepository(User).findOneByOrFail({ id: USER.id }),
      });
      expect(await stored()).toEqual(before);
      expect(await tokens()).toHaveLength(2);
    },
  );

  it('should read nothing for an unknown digest', async () => {
    await expect(
      sut.rotate(digest('x'), digest('n'), USE, { ownerVerified: false }, NO_AUDIT),
    ).resolves.toEqual({ rotated: false, presented: null, owner: null });
  });

  it('should move a session only from the generation it is at (compare-and-set)', async () => {
    await store(session(), token(3));

    const [first, second] = await sut.atomically(async (unit) => [
      await unit.advance(token(3), digest('a'), USE),
      await unit.advance(token(3), digest('b'), USE),
    ]);

    expect([first, second]).toEqual([true, false]);
    expect((await stored()).generation).toBe(4);
    expect((await tokens()).map((t) => t.tokenHash)).toEqual([digest('3'), digest('a')]);
  });

  it('should end a session once, recording how', async () => {
    await store(session(), token(3));
    const ending = { at: new Date('2026-01-03T00:00:00.001Z'), ip: '10.0.0.1', reason: 'bye' };

    const [first, second] = await sut.atomically(async (unit) => [
      await unit.endSession(SESSION_ID, ending),
      await unit.endSession(SESSION_ID, { ...ending, reason: 'again' }),
    ]);

    expect([first, second]).toEqual([true, false]);
    expect(await stored()).toMatchObject({
      endedAt: ending.at,
      endedByIp: '10.0.0.1',
      endReason: 'bye',
    });
  });

  it('should find a token with its session as TypeORM hydrates them', async () => {
    await store(session(), token(2), token(3));

    await expect(sut.findByHash(digest('2'))).resolves.toEqual({
      token: await dataSource.getRepository(RefreshToken).findOneByOrFail({
        tokenHash: digest('2'),
      }),
      session: await stored(),
    });
    await expect(sut.findByHash(digest('z'))).resolves.toBeNull();
  });

  it('should delete a session with its tokens when its owner is deleted', async () => {
    await store(session(), token(2), token(3));

    await dataSource.getRepository(User).delete({ id: USER.id });

    await expect(dataSource.getRepository(Session).count()).resolves.toBe(0);
    await expect(dataSource.getRepository(RefreshToken).count()).resolves.toBe(0);
  });
});
