import type { DataSource } from 'typeorm';
import { AuditEventRepository } from '../../src/audit/audit-event.repository.js';
import { RandomSource } from '../../src/common/random/random-source.js';
import type { Clock } from '../../src/common/time/clock.js';
import { UnitOfWork } from '../../src/database/unit-of-work.js';
import { AuthEvents } from '../../src/events/auth-events.js';
import { WebhookDeliveryRepository } from '../../src/webhooks/webhook-delivery.repository.js';

/** AuthEvents as the application builds it, writing audit rows (and deliveries) to `dataSource`. */
export function buildAuthEvents(
  dataSource: DataSource,
  clock: Clock,
  unitOfWork = new UnitOfWork(dataSource),
): AuthEvents {
  return new AuthEvents(
    clock,
    unitOfWork,
    new AuditEventRepository(unitOfWork, dataSource, new RandomSource()),
    new WebhookDeliveryRepository(unitOfWork, dataSource),
  );
}
