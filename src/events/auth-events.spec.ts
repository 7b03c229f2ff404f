import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { buildAuthEvents } from '../../test/utils/auth-events.js';
import { FakeClock } from '../../test/utils/fake-clock.js';
import { createInMemoryDataSource } from '../../test/utils/in-memory-database.js';
import { originAt } from '../../test/utils/origin.js';
import { buildUser } from '../../test/factories/user.factory.js';
import { AuditEvent } from '../audit/entities/audit-event.entity.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { User } from '../users/entities/user.entity.js';
import type { AuthEventRecord } from './auth-event.js';
import { AuthEvents } from './auth-events.js';

const NOW = new Date('2026-01-01T12:00:00.000Z');
const ORIGIN = originAt('192.0.2.1');
const EVENT = { type: 'refresh_failed', userId: null, reason: 'invalid' } as const;

describe(AuthEvents.name, () => {
  let dataSource: DataSource;
  let unitOfWork: UnitOfWork;
  let sut: AuthEvents;

  const storedTypes = async (): Promise<string[]> =>
    (await dataSource.manager.find(AuditEvent, { order: { id: 'ASC' } })).map((row) => row.type);
  const userCount = (): Promise<number> => dataSource.manager.countBy(User, {});

  beforeEach(async () => {
    dataSource = await createInMemoryDataSource();
    unitOfWork = new UnitOfWork(dataSource);
    sut = buildAuthEvents(dataSource, new FakeClock(NOW), unitOfWork);
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    await dataSource.destroy();
  });

  it('should write the row in the unit and tell every listener only once the unit committed', async () => {
    const seen: AuthEventRecord[][] = [[], []];
    sut.subscribe((record) => seen[0].push(record));
    sut.subscribe((record) => seen[1].push(record));
    const toldInside: number[] = [];

    await unitOfWork.transaction(async (m) => {
      await sut.record(m, EVENT, ORIGIN);
      toldInside.push(seen[0].length);
    });

    const expected = { event: EVENT, origin: ORIGIN, at: NOW };
    expect(toldInside).toEqual([0]);
    expect(seen).toEqual([[expected], [expected]]);
    await expect(storedTypes()).resolves.toEqual(['refresh_failed']);
  });

  it('should keep neither the row nor the news of an event whose unit rolled back', async () => {
    const seen: string[] = [];
    sut.subscribe((record) => seen.push(record.event.type));

    const failing = unitOfWork.transaction(async (m) => {
      await sut.record(m, EVENT, ORIGIN);
      throw new Error('the change failed');
    });

    await expect(failing).rejects.toThrow('the change failed');
    expect(seen).toEqual([]);
    await expect(storedTypes()).resolves.toEqual([]);
  });

  it('should fail the change when its audit row cannot be written, and keep the change out', async () => {
    await dataSource.query(
      `CREATE TRIGGER "refuse_audit" BEFORE INSERT ON "auth_events" ` +
        `BEGIN SELECT RAISE(ABORT, 'audit refused'); END`,
    );
    const seen: string[] = [];
    sut.subscribe((record) => seen.push(record.event.type));

    const change = unitOfWork.transaction(async (m) => {
      await m.insert(User, buildUser());
      await sut.record(m, EVENT, ORIGIN);
    });

    await expect(change).rejects.toThrow('audit refused');
    await expect(userCount()).resolves.toBe(0);
    expect(seen).toEqual([]);
  });

  it('should commit an event of its own before recordAlone resolves', async () => {
    await sut.recordAlone(EVENT, ORIGIN);

    await expect(storedTypes()).resolves.toEqual(['refresh_failed']);
  });

  it('should let a settled flow answer only once its pending events committed, or fail it', async () => {
    const pending = sut.pending();
    pending.record(EVENT, ORIGIN);

    await expect(pending.settle(Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    await expect(storedTypes()).resolves.toEqual(['refresh_failed']);

    await dataSource.query('DROP TABLE "auth_events"');
    const failing = sut.pending();
    failing.record(EVENT, ORIGIN);
    await expect(failing.settle(Promise.resolve('answer'))).rejects.toThrow(/auth_events/);
  });

  it('should log a listener that throws and still run the others', async () => {
    const errors: string[] = [];
    jest.spyOn(Logger.prototype, 'error').mockImplementation((message: unknown) => {
      errors.push(String(message));
    });
    const seen: string[] = [];
    sut.subscribe(() => {
      throw new Error('disk full');
    });
    sut.subscribe((record) => seen.push(record.event.type));

    await expect(sut.recordAlone(EVENT, ORIGIN)).resolves.toBeUndefined();

    expect(seen).toEqual(['refresh_failed']);
    expect(errors).toEqual(['A listener failed on the refresh_failed event: disk full']);
  });
});
