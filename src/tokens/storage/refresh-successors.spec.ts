import { createHash, createHmac, hkdfSync } from 'node:crypto';
import type { AppConfig } from '../../config/app-config.js';
import { RefreshSuccessors } from './refresh-successors.js';

const CURRENT = 'c'.repeat(32);
const PREVIOUS = 'p'.repeat(40);
const PRESENTED = 'kq3V0S2yq8m1bZcR5x0G6uUj4tQnH7wEoLdP9aFsYiM';

const configOf = (windowSeconds: number, previousSecrets: string[] = []): AppConfig =>
  ({
    jwt: { secret: CURRENT, previousSecrets, refreshRetryWindowSeconds: windowSeconds },
  }) as unknown as AppConfig;

/** The derivation written out independently, so that a change of it fails here. */
function expected(secret: string, presented: string): { raw: string; jtiHex: string } {
  const key = Buffer.from(hkdfSync('sha256', secret, '', 'keygate-refresh-successor-v1', 32));
  const mac = createHmac('sha512', key).update(presented).digest();
  return {
    raw: mac.subarray(0, 32).toString('base64url'),
    jtiHex: mac.subarray(32, 48).toString('hex'),
  };
}

describe(RefreshSuccessors.name, () => {
  it('should be off, deriving nothing, with the window at 0', () => {
    const sut = new RefreshSuccessors(configOf(0));

    expect(sut.enabled).toBe(false);
    expect(sut.windowMs).toBe(0);
    expect(() => sut.successorOf(PRESENTED)).toThrow(
      'Successors are derived only while Jwt__RefreshRetryWindowSeconds is on',
    );
    expect(sut.candidatesOf(PRESENTED)).toEqual([]);
  });

  it('should derive the successor and the access token id by HMAC under a key from the secret', () => {
    const sut = new RefreshSuccessors(configOf(30));

    const successor = sut.successorOf(PRESENTED);

    expect(sut.enabled).toBe(true);
    expect(sut.windowMs).toBe(30_000);
    const { raw, jtiHex } = expected(CURRENT, PRESENTED);
    expect(successor.raw).toBe(raw);
    expect(successor.raw).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(successor.hash).toEqual(createHash('sha256').update(raw).digest());
    // RFC 9562 version 8, variant 10xx: the derived bytes with those bits set.
    expect(successor.accessTokenId).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    const hex = successor.accessTokenId.replaceAll('-', '');
    expect([hex.slice(0, 12), hex.slice(13, 16), hex.slice(18)]).toEqual([
      jtiHex.slice(0, 12),
      jtiHex.slice(13, 16),
      jtiHex.slice(18),
    ]);
  });

  it('should give one presented value one successor, and different values different ones', () => {
    const sut = new RefreshSuccessors(configOf(30));
    const other = `${PRESENTED.slice(0, -1)}N`;

    expect(sut.successorOf(PRESENTED)).toEqual(sut.successorOf(PRESENTED));
    expect(sut.successorOf(other).raw).not.toBe(sut.successorOf(PRESENTED).raw);
    expect(sut.successorOf(other).accessTokenId).not.toBe(sut.successorOf(PRESENTED).accessTokenId);
  });

  it('should offer the successor under every configured secret, the current one first', () => {
    const sut = new RefreshSuccessors(configOf(30, [PREVIOUS]));
    const before = new RefreshSuccessors({
      jwt: { secret: PREVIOUS, previousSecrets: [], refreshRetryWindowSeconds: 30 },
    } as unknown as AppConfig);

    const candidates = sut.candidatesOf(PRESENTED);

    expect(candidates.map((c) => c.raw)).toEqual([
      expected(CURRENT, PRESENTED).raw,
      expected(PREVIOUS, PRESENTED).raw,
    ]);
    // What an instance with the previous secret as its current one issued.
    expect(candidates[1]).toEqual(before.successorOf(PRESENTED));
  });
});
