import { keyStates, nextChangeAfter, type KeyTimes } from './key-states.js';

const MINUTE = 60_000;
const LIFETIME = 15 * MINUTE;
const T0 = Date.parse('2026-01-01T00:00:00.000Z');

const key = (
  kid: string,
  activatesAt: number | null,
  retiredAt: number | null = null,
): KeyTimes => ({
  kid,
  activatesAt: activatesAt === null ? null : new Date(activatesAt),
  createdAt: new Date(T0),
  retiredAt: retiredAt === null ? null : new Date(retiredAt),
});

const statesAt = (rows: KeyTimes[], now: number): Record<string, string> =>
  Object.fromEntries([...keyStates(rows, now, LIFETIME)].map(([kid, { state }]) => [kid, state]));

describe(keyStates.name, () => {
  const a = key('a', T0);
  const b = key('b', T0 + 10 * MINUTE);

  it.each([
    ['before the next key activates', T0 + 5 * MINUTE, { a: 'current', b: 'next' }],
    ['when it activates', T0 + 10 * MINUTE, { a: 'previous', b: 'current' }],
    [
      'a token lifetime later, less a millisecond',
      T0 + 25 * MINUTE - 1,
      { a: 'previous', b: 'current' },
    ],
    ['a token lifetime later', T0 + 25 * MINUTE, { a: 'retired', b: 'current' }],
  ])('should derive the states %s', (_label, now, expected) => {
    expect(statesAt([a, b], now)).toEqual(expected);
  });

  it('should leave no key current when the newest activated one was retired', () => {
    expect(statesAt([a, key('b', T0 + MINUTE, T0 + 2 * MINUTE)], T0 + 3 * MINUTE)).toEqual({
      a: 'previous',
      b: 'retired',
    });
  });

  it('should make a key activated at the instant its predecessor was retired the current one', () => {
    const retired = key('z', T0, T0);
    const successor = key('a', T0);

    expect(statesAt([successor, retired], T0)).toEqual({ a: 'current', z: 'retired' });
  });

  it('should count a secret’s retirement row as retired, and let it verify nothing', () => {
    const statuses = keyStates([key('secret', null, T0)], T0, LIFETIME);

    expect(statuses.get('secret')).toEqual({ state: 'retired', verifiesUntil: -Infinity });
  });

  it('should let a previous key verify until its successor’s activation plus a token lifetime', () => {
    const statuses = keyStates([a, b], T0 + 11 * MINUTE, LIFETIME);

    expect(statuses.get('a')?.verifiesUntil).toBe(T0 + 25 * MINUTE);
    expect(statuses.get('b')?.verifiesUntil).toBe(Infinity);
  });
});

describe(nextChangeAfter.name, () => {
  it('should be the next activation, then the end of the previous key, then never', () => {
    const rows = [key('a', T0), key('b', T0 + 10 * MINUTE)];
    const at = (now: number): number => nextChangeAfter(rows, keyStates(rows, now, LIFETIME), now);

    expect(at(T0)).toBe(T0 + 10 * MINUTE);
    expect(at(T0 + 10 * MINUTE)).toBe(T0 + 25 * MINUTE);
    expect(at(T0 + 25 * MINUTE)).toBe(Infinity);
  });
});
