import { In, type EntityManager, type ObjectLiteral, type SelectQueryBuilder } from 'typeorm';

/** A claim on outbox rows: who holds them (a fresh id per claim), as of when, and until when. */
export interface OutboxClaim {
  readonly id: string;
  readonly now: Date;
  readonly until: Date;
}

/** The columns every outbox table has, whatever it delivers. */
export interface OutboxRow extends ObjectLiteral {
  id: string;
  attempts: number;
  nextAttemptAt: Date;
  claimedBy: string | null;
  claimedUntil: Date | null;
}

/**
 * Claims, inside `manager`'s transaction, up to `limit` rows of `target` that are due (their next
 * attempt has come), not held by a claim that still runs, and that `open` accepts (the channel's
 * own conditions, on the alias `row`); counts the attempt and returns the rows claimed. The update
 * re-checks the claim, so two processes that read the same rows (two on one SQLite file) cannot
 * both win one; on PostgreSQL (`skipLocked`) the read also skips rows another instance is claiming.
 * Each outbox table's repository calls this with its own entity and conditions.
 */
export async function claimDueRows<T extends OutboxRow>(
  manager: EntityManager,
  target: new () => T,
  claim: OutboxClaim,
  limit: number,
  options: {
    readonly skipLocked: boolean;
    readonly open: (query: SelectQueryBuilder<T>) => SelectQueryBuilder<T>;
    /** The column due rows are taken in, on the alias `row`; `row.nextAttemptAt` by default. */
    readonly orderBy?: string;
  },
): Promise<T[]> {
  // Taken in another order, SQLite must walk that order's index and stop at `limit`: left
  // indexable, the due condition makes it read every due row, then sort them (the unary plus
  // keeps the column out of index choice). PostgreSQL plans by its statistics.
  const dueColumn =
    options.orderBy === undefined || options.skipLocked
      ? 'row.nextAttemptAt'
      : '+row.nextAttemptAt';
  const due = options
    .open(manager.createQueryBuilder(target, 'row').select('row.id'))
    .andWhere(`${dueColumn} <= :now`, { now: claim.now })
    .andWhere('(row.claimedUntil IS NULL OR row.claimedUntil <= :now)', { now: claim.now })
    .orderBy(options.orderBy ?? 'row.nextAttemptAt')
    .addOrderBy('row.id')
    .limit(limit);
  if (options.skipLocked) {
    due.setLock('pessimistic_write').setOnLocked('skip_locked');
  }
  const ids = (await due.getMany()).map((row) => row.id);
  if (ids.length === 0) {
    return [];
  }
  await manager
    .createQueryBuilder()
    .update(target)
    .set({
      claimedBy: claim.id,
      claimedUntil: claim.until,
      attempts: () => '"attempts" + 1',
    } as never)
    .where({ id: In(ids) })
    .andWhere('("claimedUntil" IS NULL OR "claimedUntil" <= :now)', { now: claim.now })
    .execute();
  // The claimed rows are among `ids`: reading them by primary key needs no index on the claim.
  return manager.find(target, {
    where: { id: In(ids), claimedBy: claim.id } as never,
    order: { nextAttemptAt: 'ASC', id: 'ASC' } as never,
  });
}
