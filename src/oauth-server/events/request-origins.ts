import type { IncomingMessage } from 'node:http';
import type { RequestOrigin } from '../../common/request-origin/request-origin.js';

/**
 * The origin (address, user agent, request id) of each request handed to the protocol library,
 * as Fastify read it: the library sees only the raw request, and its events are recorded with
 * the origin the rest of Keygate's events carry. Entries go with their requests.
 */
export const requestOrigins = new WeakMap<IncomingMessage, RequestOrigin>();
