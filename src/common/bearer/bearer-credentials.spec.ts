import { bearerCredentials } from './bearer-credentials.js';

describe(bearerCredentials.name, () => {
  it('should read the credentials of exactly `Bearer`, one space, then the credentials', () => {
    expect(bearerCredentials('Bearer kga_abc.DEF-123')).toBe('kga_abc.DEF-123');
  });

  it.each([
    ['bearer kga_abc'],
    ['BEARER kga_abc'],
    ['BeArEr kga_abc'],
    ['Bearer  kga_abc'],
    ['Bearer\tkga_abc'],
    ['Bearer kga_abc '],
    [' Bearer kga_abc'],
    ['Bearer kga abc'],
    ['Bearer '],
    ['Bearer'],
    ['Basic kga_abc'],
    ['kga_abc'],
    [''],
  ])('should find no credentials in %j', (header) => {
    expect(bearerCredentials(header)).toBeNull();
  });

  it('should find none without a header, or in a repeated one', () => {
    expect(bearerCredentials(undefined)).toBeNull();
    expect(bearerCredentials(['Bearer a', 'Bearer b'])).toBeNull();
  });
});
