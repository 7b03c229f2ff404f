import type { IncomingMessage } from 'node:http';
import { request } from 'node:https';
import { isIP } from 'node:net';
import {
  guardedLookup,
  isPublicAddress,
  RefusedDestinationError,
} from '../../common/network/destination-guard.js';

/**
 * Bytes of an answer read at most. The library's per-purpose limit (5 KiB for a client metadata
 * document, provider-configuration.ts) decides; this bounds what is read before it decides.
 */
export const FETCH_READ_LIMIT_BYTES = 64 * 1024;

/** The whole exchange's time limit, whatever the library's own signal says. */
export const FETCH_TIME_LIMIT_MS = 5000;

/** Answer headers the library reads (caching, size, type); no other is passed on. */
const KEPT_HEADERS = ['cache-control', 'expires', 'content-length', 'content-type'] as const;

/**
 * The library's `fetch` (client metadata documents, and any other document it would fetch):
 * `https:` only, through the one outbound-call guard (src/common/network/destination-guard.ts),
 * which refuses private, loopback and link-local addresses after name resolution unless
 * `allowPrivate` (OAuthServer__AllowPrivateFetch). Redirects are not followed (a 3xx is handed
 * back as it is, which the library refuses), at most FETCH_READ_LIMIT_BYTES + 1 are read, and
 * the exchange is bounded by FETCH_TIME_LIMIT_MS and the library's signal. Certificates are
 * checked against Node's default authorities (the system's and NODE_EXTRA_CA_CERTS).
 */
export function guardedFetch(
  allowPrivate: boolean,
): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  const lookup = guardedLookup(allowPrivate);
  return (input, init) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(input instanceof Request ? input.url : input);
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (url.protocol !== 'https:' || url.username !== '' || url.password !== '') {
        reject(new Error('only https URLs without credentials are fetched'));
        return;
      }
      if (isIP(host) !== 0 && !allowPrivate && !isPublicAddress(host)) {
        reject(new RefusedDestinationError());
        return;
      }
      const signals = [AbortSignal.timeout(FETCH_TIME_LIMIT_MS)];
      if (init?.signal) {
        signals.push(init.signal);
      }
      const req = request(
        {
          hostname: host,
          port: url.port === '' ? undefined : Number(url.port),
          path: `${url.pathname}${url.search}`,
          method: 'GET',
          headers: { accept: 'application/json', 'user-agent': 'Keygate' },
          agent: false,
          lookup,
          signal: AbortSignal.any(signals),
        },
        (response) => readBounded(response, resolve, reject),
      );
      req.on('error', reject);
      req.end();
    });
}

function readBounded(
  response: IncomingMessage,
  resolve: (response: Response) => void,
  reject: (error: Error) => void,
): void {
  const chunks: Buffer[] = [];
  let read = 0;
  let isSettled = false;
  const finish = () => {
    if (isSettled) {
      return;
    }
    isSettled = true;
    const headers = new Headers();
    for (const name of KEPT_HEADERS) {
      const value = response.headers[name];
      if (typeof value === 'string') {
        headers.set(name, value);
      }
    }
    const status = response.statusCode ?? 502;
    const body = Buffer.concat(chunks);
    resolve(
      new Response(status === 204 || status === 304 ? null : body, {
        status: status < 200 || status > 599 ? 502 : status,
        headers,
      }),
    );
  };
  response.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    read += chunk.length;
    if (read > FETCH_READ_LIMIT_BYTES) {
      // Enough to know it is too large: the library refuses it by its limit.
      response.removeAllListeners('data');
      response.destroy();
      finish();
    }
  });
  response.on('end', finish);
  response.on('error', reject);
}
