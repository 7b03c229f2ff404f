import { Injectable } from '@nestjs/common';
import { In, type EntityManager } from 'typeorm';
import { UnitOfWork } from '../database/unit-of-work.js';
import { WebhookSubscription } from './entities/webhook-subscription.entity.js';

/** The queries on `webhook_subscriptions`. Used by the webhooks module's services only. */
@Injectable()
export class WebhookSubscriptionRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  async insertWithin(manager: EntityManager, subscription: WebhookSubscription): Promise<void> {
    await manager.insert(WebhookSubscription, subscription);
  }

  /** Deletes one, and (foreign key) its deliveries; false when there was none. */
  async deleteWithin(manager: EntityManager, id: string): Promise<boolean> {
    const result = await manager.delete(WebhookSubscription, { id });
    return (result.affected ?? 0) > 0;
  }

  /** Every subscription, oldest first; a handful, read by the CLI. */
  all(): Promise<WebhookSubscription[]> {
    return this.unitOfWork.run((m) =>
      m.find(WebhookSubscription, { order: { createdAt: 'ASC', id: 'ASC' } }),
    );
  }

  /** The subscriptions with these ids (by primary key). */
  byIds(ids: readonly string[]): Promise<WebhookSubscription[]> {
    return ids.length === 0
      ? Promise.resolve([])
      : this.unitOfWork.run((m) => m.find(WebhookSubscription, { where: { id: In([...ids]) } }));
  }
}
