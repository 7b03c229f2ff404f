import { SequenceRandomSource } from '../../test/utils/fake-random.js';
import { RandomSource } from '../common/random/random-source.js';
import {
  EventIdGenerator,
  eventIdBytes,
  eventIdFloor,
  eventIdText,
  eventIdTime,
} from './event-id.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const AT = new Date('2026-01-01T00:00:00.000Z');

describe(EventIdGenerator.name, () => {
  it('should take its random bits from the injected source', () => {
    const sut = new EventIdGenerator(new SequenceRandomSource());

    // The source's first ten bytes are the number 1: bits 62-73 (zero) follow the version
    // nibble, bits 0-61 the variant bits; the next id of that millisecond adds one.
    expect(sut.next(AT)).toBe('019b76da-a800-7000-8000-000000000001');
    expect(sut.next(AT)).toBe('019b76da-a800-7000-8000-000000000002');
  });

  it('should make version 7 UUIDs that start with the time', () => {
    const sut = new EventIdGenerator(new RandomSource());

    const id = sut.next(AT);

    expect(id).toMatch(UUID_V7);
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(AT.getTime());
  });

  it('should make ids that grow within one millisecond', () => {
    const sut = new EventIdGenerator(new RandomSource());

    const ids = Array.from({ length: 1000 }, () => sut.next(AT));

    expect(new Set(ids).size).toBe(1000);
    expect([...ids].sort()).toEqual(ids);
    ids.forEach((id) => expect(id).toMatch(UUID_V7));
  });

  it('should keep growing when the clock steps back', () => {
    const sut = new EventIdGenerator(new RandomSource());
    const later = sut.next(new Date(AT.getTime() + 5_000));

    const earlier = sut.next(AT);

    expect(earlier > later).toBe(true);
  });

  it('should order ids of later milliseconds after earlier ones', () => {
    const sut = new EventIdGenerator(new RandomSource());

    const ids = [0, 1, 2, 1_000, 60_000].map((ms) => sut.next(new Date(AT.getTime() + ms)));

    expect([...ids].sort()).toEqual(ids);
  });
});

describe('stored event ids', () => {
  const ID = '019b76da-a800-7000-8000-000000000001';

  it('should store the UUID as its 16 bytes and show them as the same text', () => {
    const bytes = eventIdBytes(ID);

    expect(bytes).toHaveLength(16);
    expect(bytes.toString('hex')).toBe(ID.replaceAll('-', ''));
    expect(eventIdText(bytes)).toBe(ID);
  });

  it('should read the instant from the first 48 bits', () => {
    const sut = new EventIdGenerator(new RandomSource());

    expect(eventIdTime(eventIdBytes(ID))).toEqual(AT);
    expect(eventIdTime(eventIdBytes(sut.next(new Date(AT.getTime() + 1234))))).toEqual(
      new Date(AT.getTime() + 1234),
    );
  });

  it('should give a floor that only ids of earlier milliseconds sort below', () => {
    const sut = new EventIdGenerator(new RandomSource());
    const ids = [-1, 0, 1].map((ms) => eventIdBytes(sut.next(new Date(AT.getTime() + ms))));
    const floor = eventIdFloor(AT);

    expect(ids.map((id) => Buffer.compare(id, floor))).toEqual([-1, 1, 1]);
  });
});

describe(eventIdFloor.name, () => {
  it('should clamp an instant past 48 bits of milliseconds (the latest a Date holds) to the largest floor', () => {
    expect(eventIdFloor(new Date(8.64e15)).toString('hex')).toBe('ffffffffffff');
    expect(eventIdFloor(new Date(-1)).toString('hex')).toBe('000000000000');
  });
});
