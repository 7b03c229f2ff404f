import { hostname, userInfo } from 'node:os';
import type { RandomSource } from '../../common/random/random-source.js';
import { internalOrigin, type RequestOrigin } from '../../common/request-origin/request-origin.js';

/**
 * The origin of one CLI run: IP `cli`, one request id shared by every event of the run, and as
 * user agent the operating-system account and host it ran under, so the trail says who acted.
 */
export function cliOrigin(random: RandomSource): RequestOrigin {
  return { ...internalOrigin('cli', random), userAgent: `keygate-cli (${operator()})` };
}

function operator(): string {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry for this uid (common in containers): the host still says something.
  }
  return `${user}@${hostname()}`;
}
