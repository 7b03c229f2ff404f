import { jest } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { FakeClock } from '../../../test/utils/fake-clock.js';
import { createInMemoryDataSource } from '../../../test/utils/in-memory-database.js';
import type { AppConfig, TokenCleanupConfig } from '../../config/app-config.js';
import { UnitOfWork } from '../../database/unit-of-work.js';
import { User } from '../../users/entities/user.entity.js';
import { RefreshToken } from '../entities/refresh-token.entity.js';
import { RandomSource } from '../../common/random/random-source.js';
import { AuditEventRepository } from '../../audit/audit-event.repository.js';
import { Session } from '../entities/session.entity.js';
import { RefreshTokenRepository, type CleanedBatch } from '../storage/refresh-token.repository.js';
import { SessionRepository } from '../storage/session.repository.js';
import { ExpiredRows } from './expired-rows.js';
import { TokenCleanupService } from './token-cleanup.service.js';
import { WebhookDeliveryRepository } from '../../webhooks/webhook-delivery.repository.js';

const NOW = new Date('2026-03-01T00:00:00.000Z');
const DAY_MS = 24 * 60 * 60 * 1000;
const USER_ID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';

/** The purge's one-batch step, spied on to control the clock. */
interface BatchDeleter {
  deleteBatch(cutoff: Date, tokenCutoff: Date, limit: number): Promise<CleanedBatch>;
}

describe(TokenCleanupService.name, () => {
  let dataSource: DataSource;
  let clock: FakeClock;

  beforeEach(async () => {
    dataSource = await createInMemoryDataSource();
    clock = new FakeClock(NOW);
    await dataSource.getRepository(User).insert({
      id: USER_ID,
      username: 'alice',
      email: 'alice@example.com',
      passwordHash: 'x',
      failedLoginAttempts: 0,
      lockoutEnd: null,
      isActive: true,
      createdAt: NOW,
      lastLoginAt: null,
    });
  });

  afterEach(async () => {
    await dataSource.destroy();
  });

  function build(settings: Partial<TokenCleanupConfig> = {}): TokenCleanupService {
    const config = {
      jwt: { refreshTokenExpiryDays: 7 },
      tokenCleanup: {
        enabled: true,
        intervalSeconds: 60,
        batchSize: 2,
        retentionDays: 7,
        ...settings,
      },
    } as AppConfig;
    const unitOfWork = new UnitOfWork(dataSource);
    return new TokenCleanupService(
      new RefreshTokenRepository(
        unitOfWork,
        dataSource,
        new AuditEventRepository(unitOfWork, dataSource, new RandomSource()),
        new SessionRepository(unitOfWork, dataSource),
        new WebhookDeliveryRepository(unitOfWork, dataSource),
      ),
      unitOfWork,
      clock,
      config,
      new ExpiredRows(),
    );
  }

  /** A session of its own, whose one token (created a lifetime before) expires at `expiresAt`. */
  async function addToken(id: string, expiresAt: Date, isRevoked = false): Promise<void> {
    const [session, token] = tokenRows(id, expiresAt, isRevoked);
    await dataSource.getRepository(Session).insert(session);
    await dataSource.getRepository(RefreshToken).insert(token);
  }

  function tokenRows(id: string, expiresAt: Date, isRevoked = false): [Session, RefreshToken] {
    const createdAt = new Date(expiresAt.getTime() - 7 * DAY_MS);
    const session = Object.assign(new Session(), {
      id,
      userId: USER_ID,
      startedAt: createdAt,
      authMethods: null,
      generation: 0,
      lastUsedAt: createdAt,
      lastIp: '127.0.0.1',
      lastUserAgent: null,
      expiresAt,
      oldestTokenAt: createdAt,
      endedAt: isRevoked ? createdAt : null,
      endedByIp: isRevoked ? '127.0.0.1' : null,
      endReason: isRevoked ? 'Revocado' : null,
    });
    const token = Object.assign(new RefreshToken(), {
      tokenHash: Buffer.from(id.padEnd(32, '0')),
      sessionId: id,
      generation: 0,
      createdAt,
    });
    return [session, token];
  }

  /** The sessions left, each with the generations of its tokens left. */
  async function remaining(): Promise<string[]> {
    const tokens = await dataSource
      .getRepository(RefreshToken)
      .find({ order: { sessionId: 'ASC', generation: 'ASC' } });
    const sessions = await dataSource.getRepository(Session).find({ order: { id: 'ASC' } });
    expect(sessions.map((session) => session.id)).toEqual([
      ...new Set(tokens.map((token) => token.sessionId)),
    ]);
    return tokens.map((token) =>
      token.generation === 0 ? token.sessionId : `${token.sessionId}#${token.generation}`,
    );
  }

  it('should delete only tokens past expiry plus the retention margin, in several batches', async () => {
    const longGone = new Date(NOW.getTime() - 8 * DAY_MS);
    await addToken('a-expired-long-ago', longGone);
    await addToken('b-expired-long-ago', longGone, true);
    await addToken('c-expired-long-ago', new Date(NOW.getTime() - 7 * DAY_MS - 1));
    await addToken('d-expired-recently', new Date(NOW.getTime() - 6 * DAY_MS), true);
    await addToken('e-active', new Date(NOW.getTime() + DAY_MS));

    const deleted = await build().purgeExpired();

    expect(deleted).toBe(3);
    expect(await remaining()).toEqual(['d-expired-recently', 'e-active']);
  });

  it('should rest between full batches on SQLite, as long as the batch held the lock at the fastest pace seen and at least 5 ms', async () => {
    const longGone = new Date(NOW.getTime() - 30 * DAY_MS);
    for (const id of ['a', 'b', 'c', 'd', 'e']) {
      await addToken(id, longGone);
    }
    const sut = build();
    const waits: number[] = [];
    const batchMs = [30, 2, 0];
    const deleteBatch = (sut as unknown as BatchDeleter).deleteBatch;
    jest
      .spyOn(sut as unknown as BatchDeleter, 'deleteBatch')
      .mockImplementation(async (cutoff: Date, tokenCutoff: Date, limit: number) => {
        const deleted = await deleteBatch.call(sut, cutoff, tokenCutoff, limit);
        clock.advance(batchMs.shift() ?? 0);
        return deleted;
      });
    jest.spyOn(clock, 'wait').mockImplementation((ms: number) => {
      waits.push(ms);
      return Promise.resolve();
    });

    expect(await sut.purgeExpired()).toBe(5);
    // Batches of 2, 2 and 1: a rest after each full one, none after the last.
    expect(waits).toEqual([30, 5]);
    expect(await remaining()).toEqual([]);
  });

  it('should size SQLite batches of sessions by the fastest time per session so far, within TokenCleanup__BatchSize', async () => {
    const longGone = new Date(NOW.getTime() - 30 * DAY_MS);
    const rows = Array.from({ length: 600 }, (_, i) =>
      tokenRows(`t-${String(i).padStart(4, '0')}`, longGone),
    );
    for (let i = 0; i < rows.length; i += 100) {
      await dataSource.getRepository(Session).insert(rows.slice(i, i + 100).map(([s]) => s));
      await dataSource.getRepository(RefreshToken).insert(rows.slice(i, i + 100).map(([, t]) => t));
    }
    const sut = build({ batchSize: 200 });
    const limits: number[] = [];
    // 4 ms per session (2 would fit in the 10 ms target: below the first batch, so 10 again),
    // then 0.2 ms (50 fit), then a batch that waited for the lock (1 ms per session), which does
    // not shrink the next one, then 0.04 ms (250 fit: the 200 of TokenCleanup__BatchSize).
    const batchMs = [40, 2, 50];
    const deleteBatch = (sut as unknown as BatchDeleter).deleteBatch;
    jest
      .spyOn(sut as unknown as BatchDeleter, 'deleteBatch')
      .mockImplementation(async (cutoff: Date, tokenCutoff: Date, limit: number) => {
        limits.push(limit);
        const deleted = await deleteBatch.call(sut, cutoff, tokenCutoff, limit);
        clock.advance(batchMs.shift() ?? 2);
        return deleted;
      });
    jest.spyOn(clock, 'wait').mockResolvedValue();

    expect(await sut.purgeExpired()).toBe(600);
    expect(limits).toEqual([10, 10, 50, 50, 200, 200, 200]);
    expect(await remaining()).toEqual([]);
  });

  it("should delete a live session's old generations a lifetime and the retention after their creation, keeping the rest", async () => {
    const id = 's-long-lived';
    const createdAt = (daysAgo: number) => new Date(NOW.getTime() - daysAgo * DAY_MS);
    await dataSource.getRepository(Session).insert(
      Object.assign(tokenRows(id, new Date(NOW.getTime() + 6 * DAY_MS))[0], {
        startedAt: createdAt(20),
        generation: 2,
        lastUsedAt: createdAt(1),
        oldestTokenAt: createdAt(20),
      }),
    );
    for (const [generation, daysAgo] of [
      [0, 20],
      [1, 10],
      [2, 1],
    ]) {
      await dataSource.getRepository(RefreshToken).insert(
        Object.assign(new RefreshToken(), {
          tokenHash: Buffer.from(`${id}-${generation}`.padEnd(32, '0')),
          sessionId: id,
          generation,
          createdAt: createdAt(daysAgo),
        }),
      );
    }

    // Generation 0 would have expired 13 days ago, past the 7 of retention; generation 1 3 ago.
    expect(await build().purgeExpired()).toBe(1);
    expect(await remaining()).toEqual([`${id}#1`, `${id}#2`]);
    expect(await dataSource.getRepository(Session).findOneByOrFail({ id })).toMatchObject({
      generation: 2,
      oldestTokenAt: createdAt(10),
    });
    expect(await build().purgeExpired()).toBe(0);

    clock.advance(5 * DAY_MS);
    expect(await build().purgeExpired()).toBe(1);
    expect(await remaining()).toEqual([`${id}#2`]);
  });

  it('should keep a token exactly at the edge of the retention margin', async () => {
    await addToken('edge', new Date(NOW.getTime() - 7 * DAY_MS));

    expect(await build().purgeExpired()).toBe(0);
    expect(await remaining()).toEqual(['edge']);
  });

  it('should delete at expiry when the retention margin is 0', async () => {
    await addToken('just-expired', new Date(NOW.getTime() - 1));
    await addToken('not-yet', new Date(NOW.getTime() + 1));

    expect(await build({ retentionDays: 0 }).purgeExpired()).toBe(1);
    expect(await remaining()).toEqual(['not-yet']);
  });

  it('should start no timer when switched off', () => {
    const sut = build({ enabled: false });
    sut.onApplicationBootstrap();
    expect((sut as unknown as { timer: unknown }).timer).toBeUndefined();
  });

  it('should run on its timer and stop on shutdown', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      await addToken('old', new Date(NOW.getTime() - 30 * DAY_MS));
      const sut = build({ intervalSeconds: 60 });
      sut.onApplicationBootstrap();
      jest.advanceTimersByTime(60_000);
      await sut.onApplicationShutdown();
      expect(await remaining()).toEqual([]);
    } finally {
      jest.useRealTimers();
    }
  });
});
