import { VerifiedTokenCache, type VerifiedToken } from './verified-token-cache.js';

const entry = (n: number): VerifiedToken => ({
  claims: { sub: `user-${n}`, email: `u${n}@example.com`, jti: `jti-${n}` },
  exp: 1_000 + n,
  kid: 'kid-1',
});

describe(VerifiedTokenCache.name, () => {
  it('should give back what it was told about a token, and nothing about another', () => {
    const sut = new VerifiedTokenCache(10);

    sut.remember('a.b.c', entry(1));

    expect(sut.get('a.b.c')).toEqual(entry(1));
    expect(sut.get('a.b.d')).toBeUndefined();
  });

  it('should drop the oldest entry when full', () => {
    const sut = new VerifiedTokenCache(2);

    sut.remember('one', entry(1));
    sut.remember('two', entry(2));
    sut.remember('two', entry(2));
    sut.remember('three', entry(3));

    expect(sut.size).toBe(2);
    expect(sut.get('one')).toBeUndefined();
    expect(sut.get('two')).toEqual(entry(2));
    expect(sut.get('three')).toEqual(entry(3));
  });

  it('should forget a token', () => {
    const sut = new VerifiedTokenCache(2);
    sut.remember('one', entry(1));

    sut.forget('one');

    expect(sut.get('one')).toBeUndefined();
    expect(sut.size).toBe(0);
  });
});
