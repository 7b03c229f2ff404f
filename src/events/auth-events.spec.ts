import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { originAt } from '../../test/utils/origin.js';
import { FakeClock } from '../../test/utils/fake-clock.js';
import type { AuthEventRecord } from './auth-event.js';
import { AuthEvents } from './auth-events.js';

const NOW = new Date('2026-01-01T12:00:00.000Z');
const ORIGIN = originAt('192.0.2.1');
const EVENT = { type: 'refresh_failed', userId: null, reason: 'invalid' } as const;

describe(AuthEvents.name, () => {
  afterEach(() => jest.restoreAllMocks());

  it('should hand every listener the event, its origin and the time', () => {
    const sut = new AuthEvents(new FakeClock(NOW));
    const seen: AuthEventRecord[][] = [[], []];
    sut.subscribe((record) => seen[0].push(record));
    sut.subscribe((record) => seen[1].push(record));

    sut.emit(EVENT, ORIGIN);

    const expected = { event: EVENT, origin: ORIGIN, at: NOW };
    expect(seen).toEqual([[expected], [expected]]);
  });

  it('should log a listener that throws and still run the others', () => {
    const errors: string[] = [];
    jest.spyOn(Logger.prototype, 'error').mockImplementation((message: unknown) => {
      errors.push(String(message));
    });
    const sut = new AuthEvents(new FakeClock(NOW));
    const seen: string[] = [];
    sut.subscribe(() => {
      throw new Error('disk full');
    });
    sut.subscribe((record) => seen.push(record.event.type));

    expect(() => sut.emit(EVENT, ORIGIN)).not.toThrow();

    expect(seen).toEqual(['refresh_failed']);
    expect(errors).toEqual(['A listener failed on the refresh_failed event: disk full']);
  });
});
