import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { In, LessThanOrEqual } from 'typeorm';
import { UnitOfWork } from '../database/unit-of-work.js';
import { FederationCode } from './entities/federation-code.entity.js';

/** The queries on `federation_codes`; the only code that names the table. */
@Injectable()
export class FederationCodeRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** Stores a new code inside the caller's transaction; the expired ones are the cleanup's. */
  async insert(m: EntityManager, code: FederationCode): Promise<void> {
    await m.insert(FederationCode, code);
  }

  find(codeHash: string): Promise<FederationCode | null> {
    return this.unitOfWork.run((m) => m.findOneBy(FederationCode, { codeHash }));
  }

  /** Uses the code up: true for the one caller that deleted it. */
  async consume(m: EntityManager, codeHash: string): Promise<boolean> {
    const deleted = await m.delete(FederationCode, { codeHash });
    return deleted.affected === 1;
  }

  /** Burns the code outside any other write (a wrong verifier). */
  async discard(codeHash: string): Promise<void> {
    await this.unitOfWork.run((m) => m.delete(FederationCode, { codeHash }));
  }

  /** Every code of the account, inside the caller's transaction (a takeover). */
  async removeAllOf(m: EntityManager, userId: string): Promise<void> {
    await m.delete(FederationCode, { userId });
  }

  /**
   * The cleanup's batch: deletes at most `limit` codes expired by `now` (by their `expiresAt`
   * index), in one transaction; how many.
   */
  purgeExpiredBatch(now: Date, limit: number): Promise<number> {
    return this.unitOfWork.transaction(async (m) => {
      const expired = await m.find(FederationCode, {
        select: { codeHash: true },
        where: { expiresAt: LessThanOrEqual(now) },
        order: { expiresAt: 'ASC' },
        take: limit,
      });
      if (expired.length === 0) {
        return 0;
      }
      const deleted = await m.delete(FederationCode, {
        codeHash: In(expired.map((row) => row.codeHash)),
      });
      return deleted.affected ?? 0;
    });
  }
}
