import { Injectable } from '@nestjs/common';
import { DataSource, IsNull, MoreThan, Not, type EntityManager } from 'typeorm';
import type { Precondition } from '../database/guarded-write.js';
import { RandomSource } from '../common/random/random-source.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { RecoveryCode } from './entities/recovery-code.entity.js';
import { TotpFactor } from './entities/totp-factor.entity.js';

/**
 * The queries on `totp_factors` and `recovery_codes`, on both engines. Every write that decides
 * between concurrent requests (a code used once, a recovery code spent once, a confirmation) is
 * one conditional statement whose affected-row count says who won.
 */
@Injectable()
export class TotpFactorRepository {
  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly random: RandomSource,
    private readonly dataSource: DataSource,
  ) {}

  /**
   * The account `userId` has no confirmed factor: a login's statement requires it before it
   * writes (decision 0034), so a login without a second factor reads none beforehand. Table and
   * columns from the entity's metadata.
   */
  noConfirmedFactor(userId: string): Precondition {
    const metadata = this.dataSource.getMetadata(TotpFactor);
    const column = (property: keyof TotpFactor): string =>
      `"${metadata.findColumnWithPropertyName(property)?.databaseName ?? property}"`;
    return {
      kind: 'without_factor',
      sql: (first) =>
        `NOT EXISTS (SELECT 1 FROM "${metadata.tableName}" WHERE ${column('userId')} = ` +
        `$${first} AND ${column('confirmedAt')} IS NOT NULL)`,
      values: [userId],
      // The factor by its key, as findOf reads it (no scan of a derived table, as existsBy's).
      holds: async (manager) =>
        ((await this.findOf(userId, manager))?.confirmedAt ?? null) === null,
    };
  }

  findOf(userId: string, manager?: EntityManager): Promise<TotpFactor | null> {
    return manager === undefined
      ? this.unitOfWork.run((m) => m.findOneBy(TotpFactor, { userId }))
      : manager.findOneBy(TotpFactor, { userId });
  }

  /**
   * The accounts with a confirmed factor after `after` (a user id; '' for the first), at most
   * `limit`, by user id: a range of the primary key.
   */
  async confirmedAfter(after: string, limit: number): Promise<string[]> {
    const rows = await this.unitOfWork.run((m) =>
      m.find(TotpFactor, {
        select: { userId: true },
        where: { userId: MoreThan(after), confirmedAt: Not(IsNull()) },
        order: { userId: 'ASC' },
        take: limit,
      }),
    );
    return rows.map((row) => row.userId);
  }

  /** Stores a pending factor in place of a pending one; false when a confirmed one exists. */
  /** Stores a pending factor; `whenSaved` runs in the same transaction (the event it records). */
  savePending(
    factor: TotpFactor,
    whenSaved: (m: EntityManager) => Promise<void>,
  ): Promise<boolean> {
    return this.unitOfWork.transaction(async (m) => {
      // Two enrolments of one account take turns on PostgreSQL; SQLite runs units one at a time.
      await this.unitOfWork.lock(m, `totp-factor:${factor.userId}`);
      await m.delete(TotpFactor, { userId: factor.userId, confirmedAt: IsNull() });
      if ((await m.findOneBy(TotpFactor, { userId: factor.userId })) !== null) {
        return false;
      }
      await m.insert(TotpFactor, factor);
      await whenSaved(m);
      return true;
    });
  }

  /** Turns the pending factor sealed as `sealedSecret` on, with `step` used; false if it changed. */
  async confirm(
    m: EntityManager,
    userId: string,
    sealedSecret: string,
    at: Date,
    step: number,
  ): Promise<boolean> {
    const result = await m.update(
      TotpFactor,
      { userId, sealedSecret, confirmedAt: IsNull() },
      { confirmedAt: at, lastUsedStep: step },
    );
    return result.affected === 1;
  }

  /**
   * Records `step` as used if no later or equal step was: true for exactly one caller per step,
   * across instances, since the condition and the write are one statement.
   */
  async useStep(userId: string, step: number): Promise<boolean> {
    const result = await this.unitOfWork.run((m) =>
      m
        .createQueryBuilder()
        .update(TotpFactor)
        .set({ lastUsedStep: step })
        .where('"userId" = :userId', { userId })
        .andWhere('"confirmedAt" IS NOT NULL')
        .andWhere('("lastUsedStep" IS NULL OR "lastUsedStep" < :step)', { step })
        .execute(),
    );
    return result.affected === 1;
  }

  /** Replaces the sealed secret if it is still `previous` (a key roll re-encrypting it). */
  async reseal(userId: string, previous: string, next: string): Promise<void> {
    await this.unitOfWork.run((m) =>
      m.update(TotpFactor, { userId, sealedSecret: previous }, { sealedSecret: next }),
    );
  }

  /** The account's recovery codes become exactly these digests. */
  async replaceRecoveryCodes(
    m: EntityManager,
    userId: string,
    digests: readonly string[],
    at: Date,
  ): Promise<void> {
    await m.delete(RecoveryCode, { userId });
    await m.insert(
      RecoveryCode,
      digests.map((codeHash) => ({ id: this.random.uuid(), userId, codeHash, createdAt: at })),
    );
  }

  /** Deletes the code if it is still unspent: true for the one caller that spent it. */
  /** Spends a recovery code; `whenSpent` runs in the same transaction (the event it records). */
  spendRecoveryCode(
    userId: string,
    codeHash: string,
    whenSpent: (m: EntityManager) => Promise<void>,
  ): Promise<boolean> {
    return this.unitOfWork.transaction(async (m) => {
      const result = await m.delete(RecoveryCode, { userId, codeHash });
      if (result.affected !== 1) {
        return false;
      }
      await whenSpent(m);
      return true;
    });
  }

  countRecoveryCodes(userId: string): Promise<number> {
    return this.unitOfWork.run((m) => m.countBy(RecoveryCode, { userId }));
  }

  /** Deletes the factor (pending or confirmed) and its codes; false when there was none. */
  async remove(m: EntityManager, userId: string): Promise<boolean> {
    await m.delete(RecoveryCode, { userId });
    const result = await m.delete(TotpFactor, { userId });
    return (result.affected ?? 0) > 0;
  }
}
