import { jest } from '@jest/globals';
import { RandomSource } from '../common/random/random-source.js';
import type { AppConfig } from '../config/app-config.js';
import { PasswordHashObserver, type PasswordHashOperation } from './password-hash-observer.js';
import { NO_PASSWORD_HASH, PasswordHasher } from './password-hasher.js';

const ITERATIONS = 1000;
const FORMAT = /^pbkdf2-sha256\$(\d+)\$([A-Za-z0-9+/]+={0,2})\$([A-Za-z0-9+/]+={0,2})$/;

function hasherWith(
  iterations: number,
  observer?: PasswordHashObserver,
  concurrency = 2,
): PasswordHasher {
  return new PasswordHasher(
    { passwordHashing: { iterations, concurrency } } as AppConfig,
    new RandomSource(),
    observer,
  );
}

/** Records when each hash ran, from the observer's duration and the moment it is told. */
class IntervalObserver extends PasswordHashObserver {
  readonly intervals: Array<{ start: number; end: number }> = [];

  observe(_operation: PasswordHashOperation, seconds: number): void {
    const end = performance.now();
    this.intervals.push({ start: end - seconds * 1_000, end });
  }
}

class RecordingObserver extends PasswordHashObserver {
  readonly seen: Array<[PasswordHashOperation, number]> = [];

  observe(operation: PasswordHashOperation, seconds: number): void {
    this.seen.push([operation, seconds]);
  }
}

describe(PasswordHasher.name, () => {
  let sut: PasswordHasher;

  beforeEach(() => {
    sut = hasherWith(ITERATIONS);
  });

  it('should produce pbkdf2-sha256$<iterations>$<salt b64>$<key b64> with the configured cost', async () => {
    const stored = await sut.hash('S3cure!pass');

    const match = FORMAT.exec(stored);
    expect(match).not.toBeNull();
    const [, iterations, salt, key] = match ?? [];
    expect(Number(iterations)).toBe(ITERATIONS);
    expect(Buffer.from(salt, 'base64')).toHaveLength(16);
    expect(Buffer.from(key, 'base64')).toHaveLength(32);
  });

  it('should never contain the password', async () => {
    const stored = await sut.hash('S3cure!pass');

    expect(stored).not.toContain('S3cure!pass');
    expect(stored).not.toContain(Buffer.from('S3cure!pass').toString('base64'));
  });

  it('should salt every hash randomly', async () => {
    const first = await sut.hash('S3cure!pass');
    const second = await sut.hash('S3cure!pass');

    expect(first).not.toBe(second);
    expect(first.split('$')[2]).not.toBe(second.split('$')[2]);
  });

  it('should verify the right password', async () => {
    const stored = await sut.hash('S3cure!pass');

    await expect(sut.verify('S3cure!pass', stored)).resolves.toBe(true);
  });

  it.each(['s3cure!pass', 'S3cure!pas', 'S3cure!pass!', ''])(
    'should not verify the wrong password %j',
    async (wrong) => {
      const stored = await sut.hash('S3cure!pass');

      await expect(sut.verify(wrong, stored)).resolves.toBe(false);
    },
  );

  it.each([
    ['an empty string', ''],
    ['two parts', 'x$y'],
    ['dots for salt and key', 'pbkdf2-sha256$abc$..'],
    ['a non-numeric iteration count', 'pbkdf2-sha256$abc$c2FsdA==$a2V5'],
    ['zero iterations', 'pbkdf2-sha256$0$c2FsdA==$a2V5'],
    ['a fractional iteration count', 'pbkdf2-sha256$1.5$c2FsdA==$a2V5'],
    ['an unknown algorithm', 'bcrypt$1000$c2FsdA==$a2V5'],
    ['too many parts', 'pbkdf2-sha256$1000$c2FsdA==$a2V5$extra'],
    ['a plain-text password', 'S3cure!pass'],
  ])('should not verify against a malformed stored value: %s', async (_label, stored) => {
    await expect(sut.verify('S3cure!pass', stored)).resolves.toBe(false);
  });

  it('should not verify when the stored key has the wrong length', async () => {
    const stored = await sut.hash('S3cure!pass');
    const parts = stored.split('$');
    const shortKey = Buffer.from(parts[3], 'base64').subarray(0, 16).toString('base64');

    await expect(
      sut.verify('S3cure!pass', [...parts.slice(0, 3), shortKey].join('$')),
    ).resolves.toBe(false);
  });

  it('should not verify an unknown algorithm even when the rest of the hash is valid', async () => {
    const stored = await sut.hash('S3cure!pass');
    const renamed = stored.replace(/^pbkdf2-sha256\$/, 'pbkdf2-sha512$');

    await expect(sut.verify('S3cure!pass', renamed)).resolves.toBe(false);
  });

  it('should verify a hash made with another iteration count, read from the hash itself', async () => {
    const older = await hasherWith(1500).hash('S3cure!pass');
    expect(older.split('$')[1]).toBe('1500');

    await expect(sut.verify('S3cure!pass', older)).resolves.toBe(true);
    await expect(sut.verify('wrong', older)).resolves.toBe(false);
  });

  it('should not verify when the iteration count in the hash is changed', async () => {
    const stored = await sut.hash('S3cure!pass');
    const tampered = stored.replace(/^pbkdf2-sha256\$1000\$/, 'pbkdf2-sha256$1001$');

    await expect(sut.verify('S3cure!pass', tampered)).resolves.toBe(false);
  });

  it('should ask for a rehash when the stored cost is below the configured one', async () => {
    const weaker = await hasherWith(ITERATIONS - 1).hash('S3cure!pass');

    expect(sut.needsRehash(weaker)).toBe(true);
  });

  it('should not ask for a rehash when the stored cost equals or exceeds the configured one', async () => {
    const same = await sut.hash('S3cure!pass');
    const stronger = await hasherWith(ITERATIONS + 500).hash('S3cure!pass');

    expect(sut.needsRehash(same)).toBe(false);
    expect(sut.needsRehash(stronger)).toBe(false);
  });

  it('should resolve when verifying against the dummy hash, whatever the password', async () => {
    await expect(sut.verifyAgainstDummy('S3cure!pass')).resolves.toBeUndefined();
    await expect(sut.verifyAgainstDummy('')).resolves.toBeUndefined();
  });

  it('should spend a real verification on the dummy hash', async () => {
    const verify = jest.spyOn(sut, 'verify');

    await sut.verifyAgainstDummy('S3cure!pass');

    expect(verify).toHaveBeenCalledTimes(1);
    const [password, stored] = verify.mock.calls[0];
    expect(password).toBe('S3cure!pass');
    expect(stored).toMatch(FORMAT);
    expect(stored.split('$')[1]).toBe(String(ITERATIONS));
  });

  it('should reuse the dummy hash prepared at bootstrap', async () => {
    const hash = jest.spyOn(sut, 'hash');
    sut.onApplicationBootstrap();
    sut.onApplicationBootstrap();

    await sut.verifyAgainstDummy('one');
    await sut.verifyAgainstDummy('two');

    expect(hash).toHaveBeenCalledTimes(1);
  });

  it.each([
    [' S3cure!pass', 'S3cure!pass'],
    ['S3cure!pass ', 'S3cure!pass'],
    ['S3CURE!PASS', 'S3cure!pass'],
    // NFC "é" versus NFD "e" + combining acute accent.
    ['P4ss!caf\u00e9', 'P4ss!cafe\u0301'],
  ])('should neither trim nor normalise the password (%j is not %j)', async (hashed, presented) => {
    const stored = await sut.hash(hashed);

    await expect(sut.verify(presented, stored)).resolves.toBe(false);
    await expect(sut.verify(hashed, stored)).resolves.toBe(true);
  });

  describe('with an observer', () => {
    let observer: RecordingObserver;

    beforeEach(() => {
      observer = new RecordingObserver();
      sut = hasherWith(ITERATIONS, observer);
    });

    it('should tell the duration of a hash and of a verification, in seconds', async () => {
      const stored = await sut.hash('S3cure!pass');
      await sut.verify('wrong', stored);

      expect(observer.seen.map(([operation]) => operation)).toEqual(['hash', 'verify']);
      for (const [, seconds] of observer.seen) {
        expect(seconds).toBeGreaterThanOrEqual(0);
        expect(seconds).toBeLessThan(60);
      }
    });

    it('should count the dummy verification of an unknown e-mail as a verification', async () => {
      sut.onApplicationBootstrap();
      await sut.verifyAgainstDummy('S3cure!pass');

      expect(observer.seen.map(([operation]) => operation)).toEqual(['hash', 'verify']);
    });

    it('should spend a real check on a malformed stored value, so an account with no password tells nothing', async () => {
      await expect(sut.verify('S3cure!pass', 'bcrypt$1000$c2FsdA==$a2V5')).resolves.toBe(false);
      await expect(sut.verify('S3cure!pass', NO_PASSWORD_HASH)).resolves.toBe(false);

      expect(observer.seen.filter(([operation]) => operation === 'verify')).toHaveLength(2);
    });
  });

  it.each([1, 2])(
    'should compute at most %i hash(es) at once, the others waiting their turn',
    async (concurrency) => {
      const observer = new IntervalObserver();
      const limited = hasherWith(20_000, observer, concurrency);

      await Promise.all(Array.from({ length: 6 }, (_, i) => limited.hash(`S3cure!pass-${i}`)));

      const moments = observer.intervals
        .flatMap(({ start, end }) => [
          { at: start, change: 1 },
          // Rounding of start = end - duration must not turn a handover into an overlap.
          { at: end - 0.001, change: -1 },
        ])
        .sort((a, b) => a.at - b.at || a.change - b.change);
      let running = 0;
      let most = 0;
      for (const { change } of moments) {
        running += change;
        most = Math.max(most, running);
      }
      expect(observer.intervals).toHaveLength(6);
      expect(most).toBeLessThanOrEqual(concurrency);
    },
  );
});
