import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { Database as SqliteDatabase } from 'better-sqlite3';
import type { DataSource, EntityManager } from 'typeorm';
import { createInMemoryDataSource } from '../../test/utils/in-memory-database.js';
import { FakeClock } from '../../test/utils/fake-clock.js';
import { originAt } from '../../test/utils/origin.js';
import { RandomSource } from '../common/random/random-source.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { AuthEvent } from '../events/auth-event.js';
import { AuthEvents } from '../events/auth-events.js';
import { AuditEventRepository } from './audit-event.repository.js';
import { AUDIT_BATCH_SIZE, AUDIT_MAX_PENDING, AuditWriter } from './audit-writer.js';
import { AuditEvent } from './entities/audit-event.entity.js';

const NOW = new Date('2026-01-01T12:00:00.000Z');
const USER = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
const failed = (n: number): AuthEvent => ({
  type: 'login_failed',
  userId: USER,
  email: `user${n}@example.com`,
  reason: 'bad_password',
});

/** A UnitOfWork that counts units and can be made to fail or to wait. */
class ObservedUnitOfWork extends UnitOfWork {
  units = 0;
  failure: Error | null = null;
  gate: Promise<void> | null = null;

  override async run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    await this.observe();
    return super.run(work);
  }

  /** The writer's path on SQLite. */
  override async transactionOnSqlite<T>(work: (db: SqliteDatabase) => Promise<T>): Promise<T> {
    await this.observe();
    return super.transactionOnSqlite(work);
  }

  private async observe(): Promise<void> {
    this.units += 1;
    if (this.gate !== null) {
      await this.gate;
    }
    if (this.failure !== null) {
      throw this.failure;
    }
  }
}

describe(AuditWriter.name, () => {
  let dataSource: DataSource;
  let unitOfWork: ObservedUnitOfWork;
  let events: AuthEvents;
  let sut: AuditWriter;
  let errors: string[];

  const stored = (): Promise<AuditEvent[]> =>
    dataSource.manager.find(AuditEvent, { order: { occurredAt: 'ASC', id: 'ASC' } });

  beforeEach(async () => {
    errors = [];
    jest.spyOn(Logger.prototype, 'error').mockImplementation((message: unknown) => {
      errors.push(String(message));
    });
    dataSource = await createInMemoryDataSource();
    unitOfWork = new ObservedUnitOfWork(dataSource);
    events = new AuthEvents(new FakeClock(NOW));
    sut = new AuditWriter(
      events,
      new AuditEventRepository(unitOfWork, dataSource),
      new RandomSource(),
    );
    sut.onModuleInit();
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    await dataSource.destroy();
  });

  it('should write nothing while the request that told the event is still running', async () => {
    events.emit(failed(1), originAt('192.0.2.1'));

    expect(unitOfWork.units).toBe(0);
    await sut.flush();
    expect(unitOfWork.units).toBe(1);
  });

  it('should store every event with its origin and time, in the order told', async () => {
    events.emit(failed(1), originAt('192.0.2.1'));
    events.emit({ type: 'refresh_failed', userId: null, reason: 'expired' }, originAt('192.0.2.2'));

    await sut.flush();

    expect((await stored()).map((row) => ({ ...row, id: undefined }))).toEqual([
      {
        id: undefined,
        occurredAt: NOW,
        type: 'login_failed',
        userId: USER,
        email: null,
        ip: '192.0.2.1',
        userAgent: 'jest',
        requestId: 'test-192.0.2.1',
        details: '{"reason":"bad_password"}',
      },
      {
        id: undefined,
        occurredAt: NOW,
        type: 'refresh_failed',
        userId: null,
        email: null,
        ip: '192.0.2.2',
        userAgent: 'jest',
        requestId: 'test-192.0.2.2',
        details: '{"reason":"expired"}',
      },
    ]);
  });

  it('should write the events of one turn in batches of AUDIT_BATCH_SIZE', async () => {
    const count = AUDIT_BATCH_SIZE * 2 + 5;
    for (let n = 0; n < count; n += 1) {
      events.emit(failed(n), originAt('192.0.2.1'));
    }

    await sut.flush();

    expect(unitOfWork.units).toBe(3);
    await expect(dataSource.manager.count(AuditEvent)).resolves.toBe(count);
  });

  it('should log a failed write at error level with what was lost, and go on', async () => {
    unitOfWork.failure = new Error('disk I/O error');
    events.emit(failed(1), originAt('192.0.2.1'));
    events.emit(failed(2), originAt('192.0.2.1'));
    events.emit({ type: 'refresh_failed', userId: null, reason: 'invalid' }, originAt('192.0.2.1'));

    await expect(sut.flush()).resolves.toBeUndefined();

    expect(errors).toEqual([
      'Audit trail: 3 event(s) lost (2 login_failed, 1 refresh_failed): disk I/O error',
    ]);
    unitOfWork.failure = null;
    events.emit(failed(3), originAt('192.0.2.1'));
    await sut.flush();
    await expect(dataSource.manager.count(AuditEvent)).resolves.toBe(1);
  });

  it('should drop events beyond AUDIT_MAX_PENDING and say how many', async () => {
    let release!: () => void;
    unitOfWork.gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    for (let n = 0; n < AUDIT_MAX_PENDING + 7; n += 1) {
      events.emit(failed(n), originAt('192.0.2.1'));
    }
    release();

    await sut.flush();

    await expect(dataSource.manager.count(AuditEvent)).resolves.toBe(AUDIT_MAX_PENDING);
    expect(errors).toEqual([
      `Audit trail: 7 event(s) lost: more than ${AUDIT_MAX_PENDING} were waiting to be written`,
    ]);
  });

  it('should write what is pending when the application shuts down', async () => {
    events.emit(failed(1), originAt('192.0.2.1'));

    await sut.onApplicationShutdown();

    await expect(dataSource.manager.count(AuditEvent)).resolves.toBe(1);
  });

  it('should resolve a flush with nothing pending at once', async () => {
    await expect(sut.flush()).resolves.toBeUndefined();
    expect(unitOfWork.units).toBe(0);
  });
});
