import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { setBounded } from '../../common/collections/bounded-map.js';
import type { Clock } from '../../common/time/clock.js';
import { artefactDigest } from '../storage/artefact-adapter.js';
import { DEVICE_CODE_GRANT_TYPE } from '../storage/client-adapter.js';

/** RFC 8628 §3.2: the seconds a device waits between polls, told in the authorization answer. */
export const DEVICE_POLL_INTERVAL_SECONDS = 5;
/** RFC 8628 §3.5: what a `slow_down` adds to the interval, for that poll and every later one. */
const SLOW_DOWN_STEP_SECONDS = 5;
/** The device codes remembered at once: the oldest is forgotten first. */
const TRACKED_DEVICE_CODES = 10_000;

interface Polling {
  lastAt: number;
  intervalSeconds: number;
}

/**
 * The pace of a device's polls (RFC 8628 §3.5), which the library does not keep: its device
 * authorization answer says `interval`, and a poll still pending that comes sooner than the
 * interval after the previous one is answered `slow_down` instead of `authorization_pending`,
 * with the interval 5 seconds longer from then on. Only a pending answer is changed, so tokens
 * and every other error come as the library gives them. Polls are remembered by each instance,
 * in memory, by the digest of the device code (the code itself is a bearer secret).
 */
export function installDevicePolling(provider: Provider, clock: Clock): void {
  const polls = new Map<string, Polling>();
  provider.use(async (ctx, next) => {
    await next();
    const oidc = (ctx as KoaContextWithOIDC).oidc as KoaContextWithOIDC['oidc'] | undefined;
    const body = ctx.body as Record<string, unknown> | undefined;
    if (oidc === undefined || body === undefined || body === null) {
      return;
    }
    if (oidc.route === 'device_authorization' && ctx.status === 200) {
      body.interval = DEVICE_POLL_INTERVAL_SECONDS;
      return;
    }
    const deviceCode: unknown = oidc.params?.device_code;
    if (
      oidc.route !== 'token' ||
      oidc.params?.grant_type !== DEVICE_CODE_GRANT_TYPE ||
      typeof deviceCode !== 'string' ||
      body.error !== 'authorization_pending'
    ) {
      return;
    }
    const key = artefactDigest(deviceCode);
    const now = clock.now().getTime();
    const previous = polls.get(key);
    if (previous === undefined) {
      setBounded(
        polls,
        key,
        { lastAt: now, intervalSeconds: DEVICE_POLL_INTERVAL_SECONDS },
        TRACKED_DEVICE_CODES,
      );
      return;
    }
    const tooSoon = now - previous.lastAt < previous.intervalSeconds * 1000;
    previous.lastAt = now;
    if (tooSoon) {
      previous.intervalSeconds += SLOW_DOWN_STEP_SECONDS;
      ctx.body = {
        error: 'slow_down',
        error_description: 'you are polling too quickly and should back off at a reasonable rate',
      };
    }
  });
}
