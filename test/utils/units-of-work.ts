import type { INestApplicationContext } from '@nestjs/common';
import type { TestingModuleBuilder } from '@nestjs/testing';
import { UnitOfWork } from '../../src/database/unit-of-work.js';
import { MailSender } from '../../src/mail/mail-sender.js';
import { WebhookSender } from '../../src/webhooks/webhook-sender.js';

// For tests that compare the work requests do (e.g. that a known and an unknown address cost
// the same): count units of work, with nothing in the background adding its own.

/**
 * Holds the senders still: queued mail stays in the outbox and no webhook round runs (at start-up,
 * on its timer), so only requests run work.
 */
export function holdSendersStill(builder: TestingModuleBuilder): TestingModuleBuilder {
  return builder
    .overrideProvider(MailSender)
    .useValue({ registerPreparer: () => undefined, wake: () => undefined })
    .overrideProvider(WebhookSender)
    .useValue({ wake: () => undefined, idle: () => Promise.resolve() });
}

/** From now on, appends to `units` the name of every UnitOfWork method `app` calls. */
export function recordUnitsOfWork(app: INestApplicationContext, units: string[]): void {
  const unitOfWork = app.get(UnitOfWork);
  for (const method of ['run', 'transaction', 'runOnSqlite', 'transactionOnSqlite'] as const) {
    const original = unitOfWork[method].bind(unitOfWork) as (...args: unknown[]) => unknown;
    Object.assign(unitOfWork, {
      [method]: (...args: unknown[]) => {
        units.push(method);
        return original(...args);
      },
    });
  }
}
