import { POOLED_REQUEST_MAX_BYTES, RANDOM_POOL_BYTES, RandomSource } from './random-source.js';

describe(RandomSource.name, () => {
  it('should hand out buffers of the asked size that share no memory', () => {
    const random = new RandomSource();

    const first = random.bytes(32);
    const second = random.bytes(32);

    expect(first).toHaveLength(32);
    expect(second).toHaveLength(32);
    expect(first.equals(second)).toBe(false);
    first.fill(0);
    expect(second.equals(Buffer.alloc(32))).toBe(false);
  });

  it('should never hand out the same bytes twice, across refills of its pool', () => {
    const random = new RandomSource();
    const seen = new Set<string>();
    // Three pools' worth, in pieces that do not divide the pool evenly.
    const count = Math.ceil((3 * RANDOM_POOL_BYTES) / 24);

    for (let i = 0; i < count; i++) {
      seen.add(random.bytes(24).toString('hex'));
    }

    expect(seen.size).toBe(count);
  });

  it('should serve larger requests straight from the CSPRNG', () => {
    const random = new RandomSource();

    const large = random.bytes(POOLED_REQUEST_MAX_BYTES + 1);

    expect(large).toHaveLength(POOLED_REQUEST_MAX_BYTES + 1);
    expect(large.equals(Buffer.alloc(POOLED_REQUEST_MAX_BYTES + 1))).toBe(false);
  });

  it('should wipe what it handed out from its pool', () => {
    const random = new RandomSource();

    random.bytes(16);
    const pool = (random as unknown as { pool: Buffer }).pool;

    expect(pool.subarray(0, 16).equals(Buffer.alloc(16))).toBe(true);
    expect(pool.subarray(16).equals(Buffer.alloc(RANDOM_POOL_BYTES - 16))).toBe(false);
  });

  it('should make version 4 UUIDs', () => {
    expect(new RandomSource().uuid()).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });
});
