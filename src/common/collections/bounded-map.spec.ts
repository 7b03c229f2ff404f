import { setBounded } from './bounded-map.js';

describe(setBounded.name, () => {
  it('should let the oldest entry go when a new key would pass the capacity', () => {
    const map = new Map([
      ['a', 1],
      ['b', 2],
    ]);

    setBounded(map, 'c', 3, 2);

    expect([...map]).toEqual([
      ['b', 2],
      ['c', 3],
    ]);
  });

  it('should replace a known key in place, letting nothing go', () => {
    const map = new Map([
      ['a', 1],
      ['b', 2],
    ]);

    setBounded(map, 'a', 10, 2);

    expect([...map]).toEqual([
      ['a', 10],
      ['b', 2],
    ]);
  });

  it('should grow freely below the capacity', () => {
    const map = new Map<string, number>();

    setBounded(map, 'a', 1, 2);
    setBounded(map, 'b', 2, 2);

    expect(map.size).toBe(2);
  });
});
