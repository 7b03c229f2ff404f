import {
  Agent as HttpAgent,
  request as httpRequest,
  type ClientRequest,
  type IncomingMessage,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { setBounded } from '../common/collections/bounded-map.js';
import {
  guardedLookup,
  isPublicAddress,
  RefusedDestinationError,
} from '../common/network/destination-guard.js';

/** Bytes of a receiver's answer read at most; the rest is not waited for. */
export const RESPONSE_READ_LIMIT = 4096;

/**
 * Connections are kept open between deliveries to one receiver (a connection per delivery cost
 * more than the rest of it). A kept connection was opened to an address the guard accepted.
 */
const KEEP_ALIVE = { keepAlive: true, maxSockets: 16, timeout: 30_000 };
const httpAgent = new HttpAgent(KEEP_ALIVE);
const httpsAgent = new HttpsAgent(KEEP_ALIVE);

/**
 * Destinations parsed at most; past this the oldest goes. Deliveries go to few URLs, each many
 * times, and parsing one cost a visible part of a delivery.
 */
const DESTINATIONS_MAX = 256;
const destinations = new Map<string, Destination>();

/** The two guarded look-ups, made once rather than a closure per delivery. */
const publicOnlyLookup = guardedLookup(false);
const anyAddressLookup = guardedLookup(true);

/** What a request needs of a webhook URL. */
export interface Destination {
  readonly protocol: string;
  /** The host name, or the address without an IPv6 literal's brackets. */
  readonly host: string;
  /** True when `host` is an IP address, which the guard checks before connecting. */
  readonly isAddress: boolean;
  readonly port: number | undefined;
  /** The path and query. */
  readonly path: string;
  readonly isHttps: boolean;
}

export interface WebhookPost {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface WebhookClientOptions {
  readonly connectTimeoutMs: number;
  readonly allowPrivateDestinations: boolean;
  /** Aborts the whole exchange: the attempt's deadline and shutdown. */
  readonly signal: AbortSignal;
}

/** Why an attempt failed: a short code (and HTTP status), never the receiver's text. */
export class WebhookCallError extends Error {
  constructor(
    readonly code: string,
    /** False when trying again cannot help (a refused destination). */
    readonly isRetryable = true,
  ) {
    super(code);
    this.name = 'WebhookCallError';
  }
}

/**
 * POSTs one delivery and resolves to the answer's status once its first RESPONSE_READ_LIMIT bytes
 * are read. Redirects are not followed (a 3xx is an answer like any other). The connection must
 * open within `connectTimeoutMs`; `signal` bounds the rest. The destination is checked after name
 * resolution, on the address actually connected to, so a name that resolves to a private address
 * (or changes its answer between two look-ups) is refused all the same.
 */
export function postWebhook(post: WebhookPost, options: WebhookClientOptions): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const destination = destinationOf(post.url);
    if (destination === null) {
      reject(new WebhookCallError('EURL', false));
      return;
    }
    const { host, isHttps } = destination;
    if (destination.isAddress && !options.allowPrivateDestinations && !isPublicAddress(host)) {
      reject(new WebhookCallError('EDESTINATION', false));
      return;
    }
    const request = isHttps ? httpsRequest : httpRequest;
    let settled = false;
    const fail = (error: WebhookCallError) => {
      if (!settled) {
        settled = true;
        reject(error);
      }
      req.destroy();
    };
    const req: ClientRequest = request(
      {
        protocol: destination.protocol,
        hostname: host,
        port: destination.port,
        path: destination.path,
        method: 'POST',
        headers: {
          ...post.headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(post.body)),
          'user-agent': 'Keygate-Webhooks/1',
        },
        agent: isHttps ? httpsAgent : httpAgent,
        lookup: options.allowPrivateDestinations ? anyAddressLookup : publicOnlyLookup,
        signal: options.signal,
      },
      (response: IncomingMessage) => readStatus(response, resolveOnce, fail),
    );
    const resolveOnce = (status: number, isWhole: boolean) => {
      if (!settled) {
        settled = true;
        resolve(status);
      }
      // A whole answer leaves the connection reusable; one cut at the limit does not.
      if (!isWhole) {
        req.destroy();
      }
    };
    const connectTimer = setTimeout(
      () => fail(new WebhookCallError('ECONNECTTIMEOUT')),
      options.connectTimeoutMs,
    );
    req.on('socket', (socket) => {
      const connected = () => clearTimeout(connectTimer);
      if (!socket.connecting) {
        // A kept connection: already open.
        connected();
        return;
      }
      socket.once(isHttps ? 'secureConnect' : 'connect', connected);
      socket.once('close', connected);
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(connectTimer);
      if (error instanceof WebhookCallError) {
        fail(error);
      } else if (error instanceof RefusedDestinationError) {
        fail(new WebhookCallError('EDESTINATION', false));
      } else if (options.signal.aborted) {
        fail(new WebhookCallError('ETIMEOUT'));
      } else {
        fail(new WebhookCallError(typeof error.code === 'string' ? error.code : 'ENETWORK'));
      }
    });
    req.on('close', () => clearTimeout(connectTimer));
    req.end(post.body);
  });
}

/**
 * The parts of `url` a request needs, parsed once per URL string (the same object every time);
 * null when it is not a URL, which is not kept. Whether the destination is allowed is not decided
 * here: the address is checked on every delivery, after every name resolution.
 */
export function destinationOf(url: string): Destination | null {
  const known = destinations.get(url);
  if (known !== undefined) {
    return known;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  const destination: Destination = {
    protocol: parsed.protocol,
    host,
    isAddress: isIP(host) !== 0,
    port: parsed.port === '' ? undefined : Number(parsed.port),
    path: `${parsed.pathname}${parsed.search}`,
    isHttps: parsed.protocol === 'https:',
  };
  setBounded(destinations, url, destination, DESTINATIONS_MAX);
  return destination;
}

/** Reads at most RESPONSE_READ_LIMIT bytes of the answer, then settles with its status. */
function readStatus(
  response: IncomingMessage,
  resolve: (status: number, isWhole: boolean) => void,
  fail: (error: WebhookCallError) => void,
): void {
  const status = response.statusCode ?? 0;
  let read = 0;
  response.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read >= RESPONSE_READ_LIMIT) {
      resolve(status, false);
    }
  });
  response.on('end', () => resolve(status, true));
  response.on('error', () => fail(new WebhookCallError('ERESPONSE')));
}
