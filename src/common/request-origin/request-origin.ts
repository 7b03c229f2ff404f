import type { RandomSource } from '../random/random-source.js';

/**
 * Where a state change came from. Refresh tokens record it, and every audit event carries it, so
 * an operator can follow one request from its log lines to the rows it wrote.
 */
export interface RequestOrigin {
  readonly ip: string;
  /** The User-Agent header, cut to USER_AGENT_MAX_CHARS; null when the client sent none. */
  readonly userAgent: string | null;
  /** The X-Request-Id the client sent when it is well formed, otherwise one made up here. */
  readonly requestId: string;
}

export const USER_AGENT_MAX_CHARS = 256;

/** A client-chosen request id is echoed into logs and the audit trail, so only tame ones pass. */
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFrom(header: string | string[] | undefined, random: RandomSource): string {
  return typeof header === 'string' && REQUEST_ID_PATTERN.test(header) ? header : random.uuid();
}

export function userAgentFrom(header: string | string[] | undefined): string | null {
  if (typeof header !== 'string' || header === '') {
    return null;
  }
  return header.length > USER_AGENT_MAX_CHARS ? header.slice(0, USER_AGENT_MAX_CHARS) : header;
}

/** The origin of work that no HTTP request started: the admin CLI, scheduled cleanup. */
export function internalOrigin(source: string, random: RandomSource): RequestOrigin {
  return { ip: source, userAgent: null, requestId: random.uuid() };
}
