import type { AccountState } from '../user.repository.js';
import { AccountStateCache, STALENESS_BOUND_MS } from './account-state-cache.js';

const ID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';

function account(overrides: Partial<AccountState> = {}): AccountState {
  return {
    id: ID,
    username: 'alice',
    email: 'alice@example.com',
    isActive: true,
    createdAt: new Date('2026-01-01T00:00:00Z'),
    ...overrides,
  };
}

describe(AccountStateCache.name, () => {
  let now: number;
  let reads: number;
  let stored: AccountState | null;
  const strict = (): Promise<AccountState | null> => {
    reads += 1;
    return Promise.resolve(stored);
  };

  function listeningAndProven(sut: AccountStateCache): void {
    sut.listening();
    sut.proven(now);
  }

  beforeEach(() => {
    now = 1_000;
    reads = 0;
    stored = account();
  });

  const build = (enabled = true): AccountStateCache => new AccountStateCache(enabled, () => now);

  it('should read strictly every time when off', async () => {
    const sut = build(false);
    listeningAndProven(sut);

    await sut.read(ID, strict);
    await sut.read(ID, strict);

    expect(reads).toBe(2);
    expect(sut.isFresh()).toBe(false);
  });

  it('should read strictly before the listener listens, and before its first heartbeat', async () => {
    const sut = build();
    await sut.read(ID, strict);
    sut.listening();
    await sut.read(ID, strict);

    expect(reads).toBe(2);
    expect(sut.size).toBe(0);
  });

  it('should answer from memory while a heartbeat proves it fresh', async () => {
    const sut = build();
    listeningAndProven(sut);

    const first = await sut.read(ID, strict);
    const second = await sut.read(ID, strict);

    expect(reads).toBe(1);
    expect(second).toEqual(first);
  });

  it('should read strictly once the newest heartbeat is older than the bound', async () => {
    const sut = build();
    listeningAndProven(sut);
    await sut.read(ID, strict);

    now += STALENESS_BOUND_MS;
    await sut.read(ID, strict);
    expect(reads).toBe(1);

    now += 1;
    stored = account({ isActive: false });
    expect(await sut.read(ID, strict)).toEqual(account({ isActive: false }));
    expect(reads).toBe(2);
  });

  it('should forget an account whose row changed', async () => {
    const sut = build();
    listeningAndProven(sut);
    await sut.read(ID, strict);

    stored = account({ isActive: false });
    sut.changed(ID);

    expect(await sut.read(ID, strict)).toEqual(account({ isActive: false }));
    expect(reads).toBe(2);
  });

  it('should not keep a strict read whose account changed while it ran', async () => {
    const sut = build();
    listeningAndProven(sut);
    const racing = (): Promise<AccountState | null> => {
      reads += 1;
      const before = stored;
      sut.changed(ID);
      stored = account({ isActive: false });
      return Promise.resolve(before);
    };

    expect(await sut.read(ID, racing)).toEqual(account());
    expect(await sut.read(ID, strict)).toEqual(account({ isActive: false }));
    expect(reads).toBe(2);
  });

  it('should drop everything and read strictly when the listener stops, until proven again', async () => {
    const sut = build();
    listeningAndProven(sut);
    await sut.read(ID, strict);

    sut.stopped();
    sut.proven(now);
    await sut.read(ID, strict);
    sut.listening();
    await sut.read(ID, strict);
    expect(reads).toBe(3);

    sut.proven(now);
    await sut.read(ID, strict);
    await sut.read(ID, strict);
    expect(reads).toBe(4);
  });

  it('should not keep a read that began before the listener reconnected', async () => {
    const sut = build();
    listeningAndProven(sut);
    const acrossReconnect = (): Promise<AccountState | null> => {
      reads += 1;
      sut.stopped();
      sut.listening();
      sut.proven(now);
      return Promise.resolve(stored);
    };

    await sut.read(ID, acrossReconnect);

    expect(sut.size).toBe(0);
  });

  it('should never keep a missing account', async () => {
    const sut = build();
    listeningAndProven(sut);
    stored = null;

    expect(await sut.read(ID, strict)).toBeNull();
    expect(await sut.read(ID, strict)).toBeNull();
    expect(reads).toBe(2);
  });

  it('should drop everything on a change of every row', async () => {
    const sut = build();
    listeningAndProven(sut);
    await sut.read(ID, strict);

    sut.changedAll();

    expect(sut.size).toBe(0);
  });

  it('should keep at most its limit of accounts, making room from the oldest', async () => {
    const sut = new AccountStateCache(true, () => now, STALENESS_BOUND_MS, 2);
    listeningAndProven(sut);
    const other = (id: string) => (): Promise<AccountState> => Promise.resolve(account({ id }));

    await sut.read('a', other('a'));
    await sut.read('b', other('b'));
    await sut.read('c', other('c'));

    expect(sut.size).toBe(2);
  });
});
