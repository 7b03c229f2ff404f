import { Injectable } from '@nestjs/common';

/**
 * Rows of another capability that are dead once expired (a federation flow, a one-time code),
 * purged by the expired-token cleanup on its timer. `purgeBatch` deletes at most `limit` rows
 * expired by `now`, in one short write, and answers how many.
 */
export interface ExpiredRowsPurge {
  /** What the rows are, for the log ("federation flows"). */
  readonly name: string;
  purgeBatch(now: Date, limit: number): Promise<number>;
}

/**
 * The purges the cleanup runs after the refresh tokens. A capability mounted only when it is
 * configured adds its own when it starts, so the tokens module never imports it.
 */
@Injectable()
export class ExpiredRows {
  private readonly purges: ExpiredRowsPurge[] = [];

  add(purge: ExpiredRowsPurge): void {
    this.purges.push(purge);
  }

  get all(): readonly ExpiredRowsPurge[] {
    return this.purges;
  }
}
