import { ClientAddressResolver, UNKNOWN_CLIENT_IP } from './client-address.js';

describe(ClientAddressResolver.name, () => {
  describe('without trusted proxies', () => {
    const sut = new ClientAddressResolver([]);

    it.each([undefined, ''])('should answer unknown for the remote address %p', (remote) => {
      expect(sut.resolve(remote, undefined)).toBe(UNKNOWN_CLIENT_IP);
    });

    it('should use the remote address and ignore X-Forwarded-For', () => {
      expect(sut.resolve('203.0.113.9', '198.51.100.1')).toBe('203.0.113.9');
    });

    it('should report an IPv4 peer of a dual-stack socket as IPv4', () => {
      expect(sut.resolve('::ffff:203.0.113.9', undefined)).toBe('203.0.113.9');
    });

    it('should keep an IPv6 address as it is', () => {
      expect(sut.resolve('2001:db8::1', undefined)).toBe('2001:db8::1');
    });
  });

  describe('with trusted proxies', () => {
    const sut = new ClientAddressResolver(['10.0.0.1', '10.1.0.0/16', 'fd00::/8']);

    it.each<[string, string, string | string[] | undefined, string]>([
      ['a trusted proxy', '10.0.0.1', '198.51.100.7', '198.51.100.7'],
      ['a trusted range', '10.1.4.5', '198.51.100.7', '198.51.100.7'],
      ['an IPv6 trusted range', 'fd00::5', '198.51.100.7', '198.51.100.7'],
      ['a dual-stack trusted proxy', '::ffff:10.0.0.1', '198.51.100.7', '198.51.100.7'],
      ['a chain of trusted proxies', '10.0.0.1', '198.51.100.7, 10.1.0.3', '198.51.100.7'],
      ['a spoofed left-most entry', '10.0.0.1', '6.6.6.6, 198.51.100.7', '198.51.100.7'],
      ['a repeated header', '10.0.0.1', ['6.6.6.6', '198.51.100.7'], '198.51.100.7'],
      ['an untrusted peer', '203.0.113.9', '198.51.100.7', '203.0.113.9'],
      ['no header', '10.0.0.1', undefined, '10.0.0.1'],
      ['a malformed entry', '10.0.0.1', 'not-an-ip', '10.0.0.1'],
      ['only trusted hops', '10.0.0.1', '10.1.0.3', '10.1.0.3'],
      ['an entry with an IPv6 zone', '10.0.0.1', `fe80::1%${'x'.repeat(100)}`, '10.0.0.1'],
    ])('should take the client from X-Forwarded-For behind %s', (_case, remote, header, client) => {
      expect(sut.resolve(remote, header)).toBe(client);
    });
  });
});
