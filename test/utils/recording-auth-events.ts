import type { RequestOrigin } from '../../src/common/request-origin/request-origin.js';
import type { AuthEvent, AuthEventRecord } from '../../src/events/auth-event.js';
import {
  PendingEvents,
  type AuthEventListener,
  type AuthEvents,
} from '../../src/events/auth-events.js';

/**
 * AuthEvents for services tested with a fake unit of work: nothing commits there, so a recorded
 * event is told to the listeners at once. Provide it as `{ provide: AuthEvents, useClass: ... }`.
 */
export class RecordingAuthEvents {
  private readonly listeners: AuthEventListener[] = [];

  subscribe(listener: AuthEventListener): void {
    this.listeners.push(listener);
  }

  record(_manager: unknown, event: AuthEvent, origin: RequestOrigin): Promise<void> {
    this.tell({ event, origin, at: new Date(0) });
    return Promise.resolve();
  }

  recordOnSqlite(_db: unknown, event: AuthEvent, origin: RequestOrigin): void {
    this.tell({ event, origin, at: new Date(0) });
  }

  recordAlone(event: AuthEvent, origin: RequestOrigin): Promise<void> {
    return this.record(null, event, origin);
  }

  pending(): PendingEvents {
    return new PendingEvents(this as unknown as AuthEvents);
  }

  committed(event: AuthEvent, origin: RequestOrigin, at: Date): void {
    this.tell({ event, origin, at });
  }

  private tell(record: AuthEventRecord): void {
    for (const listener of this.listeners) {
      listener(record);
    }
  }
}
