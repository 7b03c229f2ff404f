import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { LessThanOrEqual } from 'typeorm';
import { UnitOfWork } from '../database/unit-of-work.js';
import { FederationFlow } from './entities/federation-flow.entity.js';

/** The queries on `federation_flows`; the only code that names the table. */
@Injectable()
export class FederationFlowRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** Stores a new flow, and drops the flows expired by `now` (they can never be taken). */
  async insert(flow: FederationFlow, now: Date): Promise<void> {
    await this.unitOfWork.transaction(async (m) => {
      await m.delete(FederationFlow, { expiresAt: LessThanOrEqual(now) });
      await m.insert(FederationFlow, flow);
    });
  }

  /**
   * Takes the flow whose state has this digest: reads and deletes it, so that of two callbacks
   * for one flow, on any instances, exactly one gets it. Null when unknown or already taken.
   */
  take(stateHash: string): Promise<FederationFlow | null> {
    return this.unitOfWork.transaction(async (m) => {
      const flow = await m.findOneBy(FederationFlow, { stateHash });
      if (flow === null) {
        return null;
      }
      const deleted = await m.delete(FederationFlow, { stateHash });
      return deleted.affected === 1 ? flow : null;
    });
  }

  /** Every flow the account started (links), inside the caller's transaction. */
  async removeAllOf(m: EntityManager, userId: string): Promise<void> {
    await m.delete(FederationFlow, { userId });
  }
}
