import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { RequestOrigin } from '../request-origin/request-origin.js';
import type { AdminScopeName } from './admin-scopes.js';
import type { AdminReasonDto } from './admin-reason.dto.js';

/** The key a request presented, once it is known to be valid. Never holds the secret. */
export interface AdminPrincipal {
  readonly id: string;
  readonly name: string;
  readonly scopes: readonly AdminScopeName[];
}

/** A request the admin key guard let through carries its key (never the secret). */
export type RequestWithAdminKey = FastifyRequest & { adminKey?: AdminPrincipal };

/** What the answer of a change needs: who, and the request it came in. */
export interface AdminCall {
  readonly key: AdminPrincipal;
  readonly origin: RequestOrigin;
}

/** The key the admin key guard let through; only on routes @AdminScope marks. */
export const CurrentAdminKey = createParamDecorator(
  (_data: unknown, context: ExecutionContext): AdminPrincipal => {
    const key = context.switchToHttp().getRequest<RequestWithAdminKey>().adminKey;
    if (key === undefined) {
      throw new Error('CurrentAdminKey on a route @AdminScope does not mark');
    }
    return key;
  },
);

/** The actor an admin change records in its event: the key, and the reason it gave. */
export function adminActorOf(call: AdminCall, body: AdminReasonDto) {
  const reason = body.reason === undefined || body.reason === '' ? null : body.reason;
  return { adminKeyId: call.key.id, adminKeyName: call.key.name, reason };
}
