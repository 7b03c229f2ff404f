import { hostname, userInfo } from 'node:os';
import { internalOrigin, type RequestOrigin } from '../common/request-origin/request-origin.js';

/**
 * The origin of one CLI run: IP `cli`, one request id shared by every event of the run, and as
 * user agent the operating-system account and host it ran under, so the trail says who acted.
 */
export function cliOrigin(): RequestOrigin {
  return { ...internalOrigin('cli'), userAgent: `keygate-cli (${operator()})` };
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
