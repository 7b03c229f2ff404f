import { originOf } from './allowed-origins.js';
import type { EnvironmentVariables } from '../environment-variables.js';

/** Passkeys (WebAuthn), on when a relying party id is configured. */
export interface PasskeysConfig {
  /** The domain passkeys are bound to: browsers refuse it for pages outside it. */
  readonly rpId: string;
  readonly rpName: string;
  /** Serialized origins whose pages' ceremonies are accepted, exactly as clientDataJSON names them. */
  readonly origins: readonly string[];
}

/** A domain name: labels of letters, digits and hyphens (an IP address is no relying party id). */
const DOMAIN = /^(?=.{1,253}$)(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))*$/;
/** Loopback names browsers treat as secure contexts over plain HTTP. */
const LOCALHOST = /^localhost$|\.localhost$/;

/**
 * Passkeys__RpId, Passkeys__RpName and Passkeys__Origins. Both of the first and last empty: off
 * (null). Otherwise the id must be a domain, and every origin an origin on it or a subdomain of
 * it, since browsers refuse a ceremony anywhere else; production refuses `http:` origins other
 * than localhost, where a network attacker could serve the page that runs the ceremony.
 */
export function checkPasskeys(
  env: EnvironmentVariables,
  isDevelopment: boolean,
): { passkeys: PasskeysConfig | null; problems: string[] } {
  const rpId = env.Passkeys__RpId.trim().toLowerCase();
  const entries = env.Passkeys__Origins.split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  if (rpId === '' && entries.length === 0) {
    return { passkeys: null, problems: [] };
  }
  const problems: string[] = [];
  if (rpId === '') {
    problems.push('Passkeys__Origins is set but Passkeys__RpId is not; set both, or neither');
  } else if (!DOMAIN.test(rpId)) {
    problems.push(`Passkeys__RpId: "${rpId}" is not a domain name (no scheme, port or path)`);
  }
  if (entries.length === 0) {
    problems.push('Passkeys__RpId is set but Passkeys__Origins is empty; list the exact origins');
  }
  const origins = new Set<string>();
  for (const entry of entries) {
    const origin = originOf(entry);
    if (origin === null) {
      problems.push(
        `Passkeys__Origins: "${entry}" is not an origin (http or https, a host and an optional port, nothing else)`,
      );
      continue;
    }
    const { protocol, hostname } = new URL(origin);
    if (rpId !== '' && hostname !== rpId && !hostname.endsWith(`.${rpId}`)) {
      problems.push(
        `Passkeys__Origins: "${entry}" is not on ${rpId} or a subdomain of it, so browsers refuse its ceremonies`,
      );
    } else if (protocol === 'http:' && !isDevelopment && !LOCALHOST.test(hostname)) {
      problems.push(
        `Passkeys__Origins: "${entry}" is http, which is refused in production except on localhost`,
      );
    } else {
      origins.add(origin);
    }
  }
  if (problems.length > 0) {
    return { passkeys: null, problems };
  }
  return {
    passkeys: { rpId, rpName: env.Passkeys__RpName.trim(), origins: [...origins] },
    problems,
  };
}
