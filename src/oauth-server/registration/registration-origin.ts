import { AsyncLocalStorage } from 'node:async_hooks';
import type { RequestOrigin } from '../../common/request-origin/request-origin.js';

/**
 * The origin of the registration request in progress. The library stores a registered client
 * through the storage adapter, which is not handed the request: the registration's edge
 * (registration-edge.ts) runs the rest of the request inside this store, so the client and its
 * audit event are written with the address that registered it.
 */
export const registrationOrigin = new AsyncLocalStorage<RequestOrigin>();
