import { clientIpOf, UNKNOWN_CLIENT_IP } from './client-ip.decorator.js';

describe(clientIpOf.name, () => {
  it.each([
    ['undefined', undefined],
    ['an empty string', ''],
  ])('should return unknown when the remote address is %s', (_label, remoteAddress) => {
    const sut = clientIpOf;

    expect(sut(remoteAddress)).toBe('unknown');
    expect(UNKNOWN_CLIENT_IP).toBe('unknown');
  });

  it.each(['127.0.0.1', '::1', '::ffff:10.0.0.7', '2001:db8::1'])(
    'should pass the address %s through unchanged',
    (remoteAddress) => {
      const sut = clientIpOf;

      expect(sut(remoteAddress)).toBe(remoteAddress);
    },
  );
});
