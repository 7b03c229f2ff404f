import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { In, LessThanOrEqual } from 'typeorm';
import { UnitOfWork } from '../database/unit-of-work.js';
import { FederationFlow } from './entities/federation-flow.entity.js';

/** The queries on `federation_flows`; the only code that names the table. */
@Injectable()
export class FederationFlowRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** Stores a new flow; the expired ones are the cleanup's (purgeExpiredBatch). */
  async insert(flow: FederationFlow): Promise<void> {
    await this.unitOfWork.run((m) => m.insert(FederationFlow, flow));
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

  /**
   * The cleanup's batch: deletes at most `limit` flows expired by `now` (by their `expiresAt`
   * index), in one transaction; how many.
   */
  purgeExpiredBatch(now: Date, limit: number): Promise<number> {
    return this.unitOfWork.transaction(async (m) => {
      const expired = await m.find(FederationFlow, {
        select: { stateHash: true },
        where: { expiresAt: LessThanOrEqual(now) },
        order: { expiresAt: 'ASC' },
        take: limit,
      });
      if (expired.length === 0) {
        return 0;
      }
      const deleted = await m.delete(FederationFlow, {
        stateHash: In(expired.map((row) => row.stateHash)),
      });
      return deleted.affected ?? 0;
    });
  }
}
