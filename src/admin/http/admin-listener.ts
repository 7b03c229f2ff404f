import type { IncomingMessage } from 'node:http';

/** Where every admin API route lives. */
export const ADMIN_API_PREFIX = '/api/admin/';

/**
 * The requests the management listener handed to the application (AdminApi__Listener=
 * management). The admin key guard serves an admin route only on the listener the setting names
 * and answers 404 on the other, so the public port shows nothing of the admin API.
 */
const viaManagement = new WeakSet<IncomingMessage>();

export function markViaManagement(request: IncomingMessage): void {
  viaManagement.add(request);
}

export function cameViaManagement(request: IncomingMessage): boolean {
  return viaManagement.has(request);
}
