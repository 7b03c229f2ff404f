import { SequenceRandomSource } from '../../../test/utils/fake-random.js';
import { RandomSource } from '../random/random-source.js';
import { requestIdFrom, userAgentFrom, USER_AGENT_MAX_CHARS } from './request-origin.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('requestIdFrom', () => {
  it.each(['abc-123', 'trace.id:42_x', 'a'.repeat(128)])('should keep a tame id: %s', (id) => {
    expect(requestIdFrom(id, new RandomSource())).toBe(id);
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['too long', 'a'.repeat(129)],
    ['with spaces', 'a b'],
    ['with a newline', 'a\nb'],
    ['with quotes', '"x"'],
    ['repeated', ['a', 'b']],
  ])('should make one up when the header is %s', (_case, header) => {
    expect(requestIdFrom(header, new RandomSource())).toMatch(UUID);
  });

  it('should take a made-up id from the injected source', () => {
    expect(requestIdFrom(undefined, new SequenceRandomSource())).toBe(
      '00000000-0000-4000-8000-000000000001',
    );
  });
});

describe('userAgentFrom', () => {
  it('should keep a short user agent', () => {
    expect(userAgentFrom('curl/8.5.0')).toBe('curl/8.5.0');
  });

  it('should cut a long one', () => {
    expect(userAgentFrom('x'.repeat(1000))).toBe('x'.repeat(USER_AGENT_MAX_CHARS));
  });

  it.each([undefined, '', ['a', 'b']])('should say null for %p', (header) => {
    expect(userAgentFrom(header)).toBeNull();
  });
});
