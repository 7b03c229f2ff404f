import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIPv4, isIPv6, type LookupFunction } from 'node:net';

/**
 * The one outbound-call guard: webhooks (src/webhooks) and the fetch of client metadata documents
 * (src/oauth-server) both connect only through it.
 *
 * Addresses an outbound call may not reach unless its opt-in says so
 * (Webhooks__AllowPrivateDestinations, OAuthServer__AllowPrivateFetch): loopback,
 * private, link-local, carrier-grade NAT, unspecified, multicast, reserved and documentation
 * ranges (RFC 6890), which would let whoever names an endpoint probe the service's own network.
 * IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4) are judged by it.
 */
const BLOCKED_V4 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED_V4.addSubnet(network, prefix, 'ipv4');
}

const BLOCKED_V6 = new BlockList();
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  BLOCKED_V6.addSubnet(network, prefix, 'ipv6');
}

/** True when `address` (an IP literal) is one an outbound call may reach without the opt-in. */
export function isPublicAddress(address: string): boolean {
  const plain = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIPv4(plain)) {
    return !BLOCKED_V4.check(plain, 'ipv4');
  }
  if (!isIPv6(plain)) {
    return false;
  }
  const bytes = ipv6Bytes(plain);
  if (bytes === null) {
    return false;
  }
  const embedded = embeddedIpv4(bytes);
  if (embedded !== null) {
    return isIPv4(embedded) && !BLOCKED_V4.check(embedded, 'ipv4');
  }
  return !BLOCKED_V6.check(plain, 'ipv6');
}

/** A destination the guard refused: trying again cannot help. */
export class RefusedDestinationError extends Error {
  readonly code = 'EDESTINATION';
  constructor() {
    super('EDESTINATION');
    this.name = 'RefusedDestinationError';
  }
}

/**
 * dns.lookup for `http.request`'s `lookup` option, refusing names any of whose addresses is not
 * public (unless `allowPrivate`): the check is on the addresses actually connected to, after
 * name resolution, so a name that resolves to a private address, or changes its answer between
 * two look-ups, is refused all the same. An IP literal is not looked up: check it with
 * isPublicAddress before connecting.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error !== null) {
        callback(error, '', 0);
        return;
      }
      if (!allowPrivate && addresses.some((a) => !isPublicAddress(a.address))) {
        callback(new RefusedDestinationError(), '', 0);
        return;
      }
      if (options.all === true) {
        (callback as unknown as (e: null, all: LookupAddress[]) => void)(null, addresses);
        return;
      }
      const first = addresses[0];
      if (first === undefined) {
        callback(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' }), '', 0);
        return;
      }
      callback(null, first.address, first.family);
    });
  };
}

/** The IPv4 address an IPv6 one carries (mapped, compatible, NAT64, 6to4), or null. */
function embeddedIpv4(bytes: Uint8Array): string | null {
  const zeros = (from: number, to: number) => bytes.subarray(from, to).every((b) => b === 0);
  const v4 = (at: number) => Array.from(bytes.subarray(at, at + 4)).join('.');
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible; :: and ::1 are not addresses of hosts).
  if (zeros(0, 10) && ((bytes[10] === 0xff && bytes[11] === 0xff) || zeros(10, 12))) {
    return zeros(0, 12) && zeros(12, 15) ? null : v4(12);
  }
  // 64:ff9b::/96 (NAT64) and 64:ff9b:1::/48 (local NAT64).
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b) {
    return v4(12);
  }
  // 2002::/16 (6to4): the IPv4 address follows the prefix.
  if (bytes[0] === 0x20 && bytes[1] === 0x02) {
    return v4(2);
  }
  return null;
}

/** The 16 bytes of an IPv6 literal (with `::` and a dotted IPv4 tail), or null. */
function ipv6Bytes(text: string): Uint8Array | null {
  // A dotted IPv4 tail is two groups written another way.
  const groups = text.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_all, a, b, c, d) =>
    [((Number(a) << 8) | Number(b)).toString(16), ((Number(c) << 8) | Number(d)).toString(16)].join(
      ':',
    ),
  );
  const [head, rest, ...extra] = groups.split('::');
  if (extra.length > 0) {
    return null;
  }
  const parse = (part: string | undefined) =>
    part === undefined || part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16));
  const left = parse(head);
  const right = parse(rest);
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (rest === undefined && missing !== 0)) {
    return null;
  }
  const words = [...left, ...Array<number>(missing).fill(0), ...right];
  if (words.some((w) => !Number.isInteger(w) || w < 0 || w > 0xffff)) {
    return null;
  }
  const bytes = new Uint8Array(16);
  words.forEach((w, i) => {
    bytes[2 * i] = w >> 8;
    bytes[2 * i + 1] = w & 0xff;
  });
  return bytes;
}
