import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { RequestWithAdminKey } from './admin-key.guard.js';
import type { AdminPrincipal } from './admin-keys.service.js';

/** The key AdminKeyGuard let through; only on routes it guards. */
export const CurrentAdminKey = createParamDecorator(
  (_data: unknown, context: ExecutionContext): AdminPrincipal => {
    const key = context.switchToHttp().getRequest<RequestWithAdminKey>().adminKey;
    if (key === undefined) {
      throw new Error('CurrentAdminKey on a route AdminKeyGuard does not guard');
    }
    return key;
  },
);
