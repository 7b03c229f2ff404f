import { describe, expect, it } from '@jest/globals';
import { FormTokens } from './form-token.js';

const SECRET = 'a-secret-of-the-tests-0123456789abcdef-0123456789';

describe(FormTokens.name, () => {
  it('should accept the token of the interaction, from any instance with the same secret', () => {
    const token = new FormTokens(SECRET).of('interaction-1');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new FormTokens(SECRET).accepts('interaction-1', token)).toBe(true);
  });

  it.each([
    ['another interaction', (t: string) => ({ uid: 'interaction-2', token: t })],
    ['a changed token', (t: string) => ({ uid: 'interaction-1', token: `${t.slice(0, -1)}x` })],
    ['no token', () => ({ uid: 'interaction-1', token: undefined })],
    ['a repeated field', (t: string) => ({ uid: 'interaction-1', token: [t, t] })],
    ['an empty token', () => ({ uid: 'interaction-1', token: '' })],
  ])('should refuse %s', (_case, presented) => {
    const sut = new FormTokens(SECRET);
    const { uid, token } = presented(sut.of('interaction-1'));
    expect(sut.accepts(uid, token)).toBe(false);
  });

  it('should refuse the token another secret makes', () => {
    const other = new FormTokens('another-secret-0123456789abcdef-0123456789abcdef').of('i');
    expect(new FormTokens(SECRET).accepts('i', other)).toBe(false);
  });
});
