import type { RequestOrigin } from '../../src/common/request-origin/request-origin.js';

/** A request origin for service-level tests, which care only about the address. */
export function originAt(ip: string): RequestOrigin {
  return { ip, userAgent: 'jest', requestId: `test-${ip}` };
}
