import { BlockList, isIP } from 'node:net';

export const UNKNOWN_CLIENT_IP = 'unknown';

/**
 * Works out the client's address. Spec §4.2: the connection's remote address, or `unknown`.
 * Behind a load balancer, X-Forwarded-For is believed only while the hop that sent it is one of
 * the trusted proxies: the header is read from right to left, and the first address that is not a
 * trusted proxy is the client. Anyone can write that header, so without trusted proxies it is
 * ignored.
 */
export class ClientAddressResolver {
  private readonly trusted: BlockList | null;

  constructor(trustedProxies: readonly string[]) {
    this.trusted = trustedProxies.length > 0 ? toBlockList(trustedProxies) : null;
  }

  resolve(remoteAddress: string | undefined, forwardedFor: string | string[] | undefined): string {
    if (remoteAddress === undefined || remoteAddress === '') {
      return UNKNOWN_CLIENT_IP;
    }
    let client = unmapIpv4(remoteAddress);
    if (this.trusted === null || forwardedFor === undefined) {
      return client;
    }
    const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
      .split(',')
      .map((hop) => unmapIpv4(hop.trim()))
      .reverse();
    for (const hop of hops) {
      if (!this.isTrusted(client) || !isPlainAddress(hop)) {
        break;
      }
      client = hop;
    }
    return client;
  }

  private isTrusted(address: string): boolean {
    const family = isIP(address);
    return family !== 0 && (this.trusted?.check(address, family === 4 ? 'ipv4' : 'ipv6') ?? false);
  }
}

function toBlockList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, prefix] = entry.split('/');
    const family = isIP(address) === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) {
      list.addAddress(address, family);
    } else {
      list.addSubnet(address, Number(prefix), family);
    }
  }
  return list;
}

/**
 * An IPv4 or IPv6 address without a zone (`fe80::1%eth0`): a zone means nothing to anyone else,
 * and `net.isIP` accepts zones of any length, while the recorded address is at most 45 characters.
 */
function isPlainAddress(address: string): boolean {
  return address.length <= 45 && !address.includes('%') && isIP(address) !== 0;
}

/** `::ffff:10.0.0.1`, as dual-stack sockets report IPv4 peers, is `10.0.0.1`. */
function unmapIpv4(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}
