import { Injectable, Logger } from '@nestjs/common';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { Clock } from '../common/time/clock.js';
import { forRequest } from '../logging/log-fields.js';
import type { AuthEvent, AuthEventRecord } from './auth-event.js';

export type AuthEventListener = (record: AuthEventRecord) => void;

/**
 * The one place services tell what happened. Listeners run synchronously and must not block:
 * anything slow (a database write) they queue. A listener that throws is logged and the others
 * still run, so a broken listener never turns a success into an error.
 */
@Injectable()
export class AuthEvents {
  private readonly logger = new Logger(AuthEvents.name);
  private readonly listeners: AuthEventListener[] = [];

  constructor(private readonly clock: Clock) {}

  subscribe(listener: AuthEventListener): void {
    this.listeners.push(listener);
  }

  emit(event: AuthEvent, origin: RequestOrigin): void {
    if (this.listeners.length === 0) {
      return;
    }
    const record: AuthEventRecord = { event, origin, at: this.clock.now() };
    for (const listener of this.listeners) {
      try {
        listener(record);
      } catch (error) {
        this.logger.error(
          `A listener failed on the ${event.type} event: ${(error as Error).message}`,
          forRequest(origin.requestId),
        );
      }
    }
  }
}
