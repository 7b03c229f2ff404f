import { RandomSource } from '../common/random/random-source.js';
import { jest } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { FakeClock } from '../../test/utils/fake-clock.js';
import { createInMemoryDataSource } from '../../test/utils/in-memory-database.js';
import type { AppConfig, AuditRetentionConfig } from '../config/app-config.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { AuthEvent } from '../events/auth-event.js';
import { buildAuthEvents } from '../../test/utils/auth-events.js';
import { AUDIT_PURGE_ORIGIN, AuditPurgeTimer } from './audit-purge-timer.js';
import { AuditRetentionRepository } from './audit-retention.repository.js';
import { AUDIT_EXPORT_PAGE_SIZE, AuditRetentionService } from './audit-retention.service.js';
import { AuditEvent } from './entities/audit-event.entity.js';
import { eventIdBytes, eventIdFloor, eventIdText } from './event-id.js';
import { UserAgentRepository } from './user-agent.repository.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const APPEND_ONLY = 'auth_events is append-only';

describe(AuditRetentionService.name, () => {
  // The database's triggers read the machine's clock; the service's clock starts there too.
  const realNow = new Date();
  let dataSource: DataSource;
  let clock: FakeClock;
  let shared: UnitOfWork | undefined;
  /** One unit of work per connection, as in the application. */
  const unitOfWork = (): UnitOfWork => (shared ??= new UnitOfWork(dataSource));

  beforeEach(async () => {
    dataSource = await createInMemoryDataSource();
    clock = new FakeClock(realNow);
    shared = undefined;
  });

  afterEach(async () => {
    await dataSource.destroy();
  });

  function settings(overrides: Partial<AuditRetentionConfig> = {}): AppConfig {
    return {
      auditRetention: {
        retentionDays: 365,
        purgeEnabled: false,
        purgeIntervalSeconds: 60,
        purgeBatchSize: 2,
        purgePauseMs: 0,
        ...overrides,
      },
    } as AppConfig;
  }

  function build(overrides: Partial<AuditRetentionConfig> = {}): AuditRetentionService {
    return new AuditRetentionService(
      new AuditRetentionRepository(unitOfWork()),
      clock,
      settings(overrides),
      new UserAgentRepository(unitOfWork()),
    );
  }

  /**
   * Inserts one row per instant; ids hold the instant, then the row's number, so they sort as
   * the instants are given. Returns the ids as UUID text.
   */
  async function addEvents(...instants: Date[]): Promise<string[]> {
    const ids = instants.map((at, n) =>
      eventIdText(
        Buffer.concat([eventIdFloor(at), Buffer.from(n.toString(16).padStart(20, '0'), 'hex')]),
      ),
    );
    const rows = instants.map((_at, n) =>
      Object.assign(new AuditEvent(), {
        id: eventIdBytes(ids[n]),
        type: 'login_failed',
        userId: null,
        email: null,
        ip: '192.0.2.1',
        userAgentId: null,
        requestId: `req-${n}`,
        details: JSON.stringify({ reason: 'unknown_email', n }),
      }),
    );
    for (let start = 0; start < rows.length; start += 100) {
      await dataSource.manager.insert(AuditEvent, rows.slice(start, start + 100));
    }
    return ids;
  }

  async function remaining(): Promise<string[]> {
    const rows = await dataSource.manager.find(AuditEvent, { order: { id: 'ASC' } });
    return rows.map((row) => eventIdText(row.id));
  }

  async function refusalOf(sql: string, parameters: unknown[] = []): Promise<string> {
    try {
      await dataSource.query(sql, parameters);
      return 'accepted';
    } catch (error: unknown) {
      // TypeORM prefixes the driver's error name.
      return String((error as { message?: unknown }).message).replace(/^SqliteError: /, '');
    }
  }

  const daysAgo = (days: number, ms = 0): Date =>
    new Date(clock.now().getTime() - days * DAY_MS + ms);

  describe('purge', () => {
    it('should delete exactly the rows older than the window, in several batches', async () => {
      const ids = await addEvents(
        daysAgo(400),
        daysAgo(366),
        daysAgo(365, -1),
        daysAgo(365),
        daysAgo(365, 1),
        daysAgo(1),
        clock.now(),
      );

      const result = await build().purge();

      expect(result).toEqual({ cutoff: daysAgo(365), retentionDays: 365, deletedCount: 3 });
      expect(await remaining()).toEqual(ids.slice(3));
    });

    it('should store the configured window for the database before it deletes', async () => {
      await addEvents(daysAgo(31), daysAgo(29));

      const result = await build({ retentionDays: 30 }).purge();

      expect(result.deletedCount).toBe(1);
      expect(await dataSource.query('SELECT "id", "retentionDays" FROM "audit_retention"')).toEqual(
        [{ id: 1, retentionDays: 30 }],
      );
    });

    it('should delete nothing when every row is inside the window', async () => {
      const ids = await addEvents(daysAgo(364), clock.now());

      expect((await build().purge()).deletedCount).toBe(0);
      expect(await remaining()).toEqual(ids);
    });

    it('should leave the rows the database still keeps when the service clock runs ahead', async () => {
      // Two days ahead of the database's clock, with a one-day window: by the service's clock
      // a row of twelve hours ago is past the window; by the database's it is not.
      clock.set(new Date(realNow.getTime() + 2 * DAY_MS));
      const ids = await addEvents(
        new Date(realNow.getTime() - 2 * DAY_MS),
        new Date(realNow.getTime() - DAY_MS / 2),
      );

      const result = await build({ retentionDays: 1 }).purge();

      expect(result.deletedCount).toBe(1);
      expect(await remaining()).toEqual([ids[1]]);
    });
  });

  describe('the database', () => {
    beforeEach(async () => {
      await build().applyWindow();
    });

    it('should refuse a DELETE that reaches a row inside the window, whole', async () => {
      const ids = await addEvents(daysAgo(400), daysAgo(1));

      expect(await refusalOf('DELETE FROM auth_events')).toBe(APPEND_ONLY);
      expect(
        await refusalOf('DELETE FROM auth_events WHERE "id" = ?', [eventIdBytes(ids[1])]),
      ).toBe(APPEND_ONLY);
      expect(await remaining()).toEqual(ids);
    });

    it('should let a row older than the window be deleted', async () => {
      const ids = await addEvents(daysAgo(400), daysAgo(1));

      expect(
        await refusalOf('DELETE FROM auth_events WHERE "id" = ?', [eventIdBytes(ids[0])]),
      ).toBe('accepted');
      expect(await remaining()).toEqual([ids[1]]);
    });

    it('should refuse every UPDATE, also of a row older than the window', async () => {
      await addEvents(daysAgo(400), daysAgo(1));

      expect(await refusalOf(`UPDATE auth_events SET "type" = 'tampered'`)).toBe(APPEND_ONLY);
      expect(
        await refusalOf(`UPDATE auth_events SET "details" = '{}' WHERE "id" < ?`, [
          eventIdFloor(daysAgo(399)),
        ]),
      ).toBe(APPEND_ONLY);
    });

    it('should refuse every DELETE when the window is missing', async () => {
      const ids = await addEvents(daysAgo(400));
      await dataSource.query('DELETE FROM "audit_retention"');

      expect(await refusalOf('DELETE FROM auth_events')).toBe(APPEND_ONLY);
      expect(await remaining()).toEqual(ids);
    });

    it.each([0, -5])('should refuse a window of %p days', async (days) => {
      expect(await refusalOf('UPDATE "audit_retention" SET "retentionDays" = ?', [days])).toMatch(
        /CHECK constraint failed/,
      );
    });
  });

  describe('entriesBefore', () => {
    it('should give every row older than the date, oldest first, across pages', async () => {
      const before = daysAgo(10);
      const older = Array.from(
        { length: AUDIT_EXPORT_PAGE_SIZE * 2 + 3 },
        // Pairs of rows share an instant: the id decides their order.
        (_, n) => daysAgo(20, Math.floor(n / 2)),
      );
      const ids = await addEvents(...older, before, daysAgo(5));

      const exported = [];
      for await (const entry of build().entriesBefore(before)) {
        exported.push(entry);
      }

      expect(exported.map((entry) => entry.id)).toEqual(ids.slice(0, older.length));
      expect(exported[1]).toEqual({
        id: ids[1],
        occurredAt: older[1],
        type: 'login_failed',
        userId: null,
        email: null,
        ip: '192.0.2.1',
        userAgent: null,
        requestId: 'req-1',
        details: { reason: 'unknown_email', n: 1 },
      });
    });

    it('should give nothing when no row is older than the date', async () => {
      await addEvents(daysAgo(1));

      const exported = [];
      for await (const entry of build().entriesBefore(daysAgo(2))) {
        exported.push(entry);
      }

      expect(exported).toEqual([]);
    });
  });

  describe(AuditPurgeTimer.name, () => {
    let told: { event: AuthEvent; ip: string }[];

    function buildTimer(overrides: Partial<AuditRetentionConfig> = {}): AuditPurgeTimer {
      const events = buildAuthEvents(dataSource, clock, unitOfWork());
      told = [];
      events.subscribe(({ event, origin }) => told.push({ event, ip: origin.ip }));
      return new AuditPurgeTimer(build(overrides), events, new RandomSource(), settings(overrides));
    }

    async function storedDays(): Promise<number> {
      const [row] = await dataSource.query<{ retentionDays: number }[]>(
        'SELECT "retentionDays" FROM "audit_retention"',
      );
      return row.retentionDays;
    }

    it('should store the window at start-up and start no timer when the purge is off', async () => {
      await addEvents(daysAgo(100));
      const sut = buildTimer({ retentionDays: 90 });

      await sut.onApplicationBootstrap();

      expect(await storedDays()).toBe(90);
      expect((sut as unknown as { timer: unknown }).timer).toBeUndefined();
      await sut.onApplicationShutdown();
      expect(await remaining()).toHaveLength(1);
    });

    it('should purge on its timer, tell what it removed, and stop on shutdown', async () => {
      jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask', 'Date'] });
      try {
        const ids = await addEvents(daysAgo(400), daysAgo(380), daysAgo(370), daysAgo(1));
        const sut = buildTimer({ purgeEnabled: true, purgeIntervalSeconds: 60 });
        await sut.onApplicationBootstrap();

        jest.advanceTimersByTime(60_000);
        await sut.onApplicationShutdown();

        // What is left: the recent row, and the purge's own event, committed before it is told.
        expect((await remaining()).filter((id) => ids.includes(id))).toEqual([ids[3]]);
        expect(await remaining()).toHaveLength(2);
        expect(told).toEqual([
          {
            event: {
              type: 'audit_purged',
              userId: null,
              cutoff: daysAgo(365),
              retentionDays: 365,
              deletedCount: 3,
            },
            ip: AUDIT_PURGE_ORIGIN,
          },
        ]);

        jest.advanceTimersByTime(60_000);
        await sut.onApplicationShutdown();
        expect(told).toHaveLength(1);
      } finally {
        jest.useRealTimers();
      }
    });

    it('should tell nothing when a run removes nothing', async () => {
      jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask', 'Date'] });
      try {
        await addEvents(daysAgo(1));
        const sut = buildTimer({ purgeEnabled: true, purgeIntervalSeconds: 60 });
        await sut.onApplicationBootstrap();

        jest.advanceTimersByTime(60_000);
        await sut.onApplicationShutdown();

        expect(told).toEqual([]);
        expect(await remaining()).toHaveLength(1);
      } finally {
        jest.useRealTimers();
      }
    });
  });
});
