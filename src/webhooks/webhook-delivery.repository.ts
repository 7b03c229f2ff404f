import { Injectable } from '@nestjs/common';
import type { Database, Statement } from 'better-sqlite3';
import { DataSource, In, IsNull, LessThan, type EntityManager } from 'typeorm';
import { sqliteConnectionOf } from '../database/driver-handle.js';
import { EntityRows } from '../database/entity-rows.js';
import { postgresTypeOf } from '../database/postgres-types.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { AuthEventRecord } from '../events/auth-event.js';
import { DeliverySink, type ComputedFacts } from '../events/delivery-sink.js';
import { claimDueRows, type OutboxClaim } from '../outbox/outbox-claim.js';
import { heldDeliveries, WebhookDelivery } from './entities/webhook-delivery.entity.js';
import { WebhookQueued } from './entities/webhook-queued.entity.js';
import { ALL_EVENTS, WebhookSubscription } from './entities/webhook-subscription.entity.js';
import { webhookFactsOf, webhookIdSql } from './webhook-events.js';

/** The name of the PostgreSQL transaction lock that webhook claims take turns on. */
export const WEBHOOK_CLAIM_LOCK = 'keygate.webhook_deliveries.claim';

/**
 * Queued rows moved into `webhook_deliveries` by one claim, at most: a few batches' worth, so that
 * a claim stays short however long the queue, and an account's queued events reach the
 * deliveries in event order.
 */
const PROMOTED_PER_CLAIM_BATCHES = 4;

/** Promotions at most in one claim while what it moved is all held back (a receiver down). */
const PROMOTIONS_PER_CLAIM = 8;

/**
 * The queries on `webhook_queue` and `webhook_deliveries`, on both engines; the only code that
 * names the tables. As the DeliverySink, it queues an event for the subscriptions that want it
 * inside the event's own transaction: one `INSERT … SELECT` over `webhook_subscriptions` into
 * `webhook_queue`, which the database matches (enabled, and `*` or the type among the wanted
 * ones), so a subscription committed before the event's statement is always seen and no cache can
 * be stale (decision 0050). When no subscription wants the event the statement inserts nothing.
 * A claim first moves queued rows into `webhook_deliveries`, in its own transaction: the change's
 * transaction appends one small row to one b-tree, and the claim's does the rest in batches.
 */
@Injectable()
export class WebhookDeliveryRepository implements DeliverySink {
  private readonly rows: EntityRows<WebhookDelivery>;
  private readonly queue: EntityRows<WebhookQueued>;
  private readonly subscriptionsTable: string;
  private sqliteInsert: Statement<unknown[]> | undefined;
  private postgresInsert: string | undefined;
  private readonly queuedListeners: (() => void)[] = [];

  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly dataSource: DataSource,
  ) {
    this.rows = new EntityRows(dataSource, WebhookDelivery);
    this.queue = new EntityRows(dataSource, WebhookQueued);
    this.subscriptionsTable = dataSource.getMetadata(WebhookSubscription).tableName;
  }

  /** `listener` runs after a transaction that queued deliveries committed (the sender's wake). */
  onQueued(listener: () => void): void {
    this.queuedListeners.push(listener);
  }

  async insertWithin(
    manager: EntityManager,
    record: AuthEventRecord,
    eventId: string,
  ): Promise<void> {
    if (this.unitOfWork.isSerialized) {
      this.insertOnSqlite(sqliteConnectionOf(this.dataSource), record, eventId);
      return;
    }
    this.postgresInsert ??= `${this.insertSelectSql(1, '', {})} RETURNING 1 AS "queued"`;
    const queued = await manager.query<unknown[]>(
      this.postgresInsert,
      this.insertSelectValues(record, eventId, {}),
    );
    if (queued.length > 0) {
      this.unitOfWork.afterCommit(manager, () => this.queued());
    }
  }

  insertOnSqlite(db: Database, record: AuthEventRecord, eventId: string): void {
    const statement = (this.sqliteInsert ??= db.prepare(this.sqliteInsertSql()));
    const { changes } = statement.run(...this.valuesOf(record, eventId, {}), typeNeedle(record));
    if (changes > 0) {
      this.unitOfWork.afterCommit(null, () => this.queued());
    }
  }

  /**
   * PostgreSQL: `INSERT … SELECT … FROM <source>, subscriptions WHERE …`, parameters from
   * `$first`: the facts not `computed`, then the type to match.
   */
  insertSelectSql(first: number, source: string, computed: ComputedFacts): string {
    let next = first;
    const select = this.queue.columns.map((column) => {
      const property = column.propertyName;
      if (property === 'subscriptionId') {
        return 'ws."id"';
      }
      return (
        computed[property as keyof ComputedFacts] ??
        `$${next++}::${postgresTypeOf(this.dataSource, column)}`
      );
    });
    const from = source === '' ? '' : `${source}, `;
    return (
      `INSERT INTO "${this.queue.table}" (${this.queue.names()}) SELECT ${select.join(', ')} ` +
      `FROM ${from}"${this.subscriptionsTable}" ws WHERE ws."isEnabled" ` +
      `AND (ws."events" = '${ALL_EVENTS}' OR strpos(ws."events", $${next}::text) > 0)`
    );
  }

  insertSelectValues(record: AuthEventRecord, eventId: string, computed: ComputedFacts): unknown[] {
    return [...this.valuesOf(record, eventId, computed), typeNeedle(record)];
  }

  /** Tells the sender once a statement that queued deliveries (its `queued` count) committed. */
  committed(queued: number): void {
    if (queued > 0) {
      this.queued();
    }
  }

  private queued(): void {
    for (const listener of this.queuedListeners) {
      listener();
    }
  }

  /** The SQLite statement: the subscription's id from its row, the facts, then the type. */
  private sqliteInsertSql(): string {
    const select = this.queue.columns.map((column) =>
      column.propertyName === 'subscriptionId' ? 'ws."id"' : '?',
    );
    return (
      `INSERT INTO "${this.queue.table}" (${this.queue.names()}) SELECT ${select.join(', ')} ` +
      `FROM "${this.subscriptionsTable}" ws WHERE ws."isEnabled" = 1 ` +
      `AND (ws."events" = '${ALL_EVENTS}' OR instr(ws."events", ?) > 0)`
    );
  }

  /** The driver's values of the queue's columns taken as values (not computed, not the subscription's). */
  private valuesOf(record: AuthEventRecord, eventId: string, computed: ComputedFacts): unknown[] {
    const facts = webhookFactsOf(record);
    const queued = Object.assign(new WebhookQueued(), {
      eventId,
      subscriptionId: '',
      type: facts.type,
      accountId: facts.accountId,
      sessionId: facts.sessionId,
      ip: facts.ip,
      occurredAt: facts.occurredAt,
    } satisfies WebhookQueued);
    const values = this.queue.values(queued);
    return values.filter((_value, i) => {
      const property = this.queue.columns[i].propertyName;
      return property !== 'subscriptionId' && !(property in computed);
    });
  }

  /**
   * Moves up to `limit` queued rows, oldest event first, into `webhook_deliveries` as pending
   * deliveries due at once, inside the claim's transaction; returns how many. Their `webhook-id`
   * is made here, from the event and the subscription. On PostgreSQL one statement deletes exactly
   * the rows it inserts; on SQLite the transaction holds the one write lock, so the same rows are
   * read twice.
   */
  private async promoteWithin(manager: EntityManager, limit: number): Promise<number> {
    const queue = `"${this.queue.table}"`;
    const oldest = `SELECT "eventId", "subscriptionId" FROM ${queue} ORDER BY "eventId", "subscriptionId" LIMIT ${limit}`;
    const columns =
      '"id", "subscriptionId", "eventId", "type", "accountId", "sessionId", "ip", "occurredAt", ' +
      '"state", "attempts", "nextAttemptAt"';
    const values =
      `${webhookIdSql('q."eventId"', 'q."subscriptionId"')}, q."subscriptionId", q."eventId", ` +
      `q."type", q."accountId", q."sessionId", q."ip", q."occurredAt", 'pending', 0, q."occurredAt"`;
    const deliveries = `"${this.rows.table}"`;
    if (!this.unitOfWork.isSerialized) {
      const [{ moved }] = await manager.query<{ moved: number }[]>(
        `WITH moved AS (DELETE FROM ${queue} WHERE ("eventId", "subscriptionId") IN ` +
          `(${oldest} FOR UPDATE SKIP LOCKED) RETURNING *), ` +
          `inserted AS (INSERT INTO ${deliveries} (${columns}) SELECT ${values} FROM moved q ` +
          'ON CONFLICT DO NOTHING) SELECT count(*)::int AS "moved" FROM moved',
      );
      return moved;
    }
    await manager.query(
      `INSERT OR IGNORE INTO ${deliveries} (${columns}) SELECT ${values} FROM ${queue} q ` +
        `ORDER BY q."eventId", q."subscriptionId" LIMIT ${limit}`,
    );
    const deleted = await manager
      .createQueryBuilder()
      .delete()
      .from(WebhookQueued)
      .where(`("eventId", "subscriptionId") IN (${oldest})`)
      .execute();
    return deleted.affected ?? 0;
  }

  /**
   * Claims up to `limit` pending deliveries that are due, of enabled subscriptions, oldest event
   * first, each with every earlier pending delivery of its subscription and account in the same
   * claim: a later event of an account waits while an earlier one to the same subscription is
   * not due yet (retrying, or replayed behind a retry) or held by another claim, so one receiver
   * sees an account's events in the order they were recorded, and a batch may carry several
   * events of one account (the sender sends them one after the other). Dead ones no longer hold
   * the line.
   *
   * Taken in event order, the earlier deliveries a claimed one needs come before it, so the scan
   * stops after `limit` rows however long the queue, unless rows wait behind a held one. Only a
   * held delivery (heldDeliveries: claimed, or moved off its event's time) can hold others
   * back, and the partial index on those holds few rows, so the check reads only them. On
   * PostgreSQL the claims of all instances take turns (a transaction lock), so none can be
   * claiming an earlier row that this claim cannot see as claimed yet.
   *
   * Queued rows are first moved into the deliveries, oldest event first, a few batches' worth;
   * when all it moved wait behind held ones and the queue has more, the claim moves more.
   */
  claimDue(claim: OutboxClaim, limit: number): Promise<WebhookDelivery[]> {
    return this.unitOfWork.transaction(async (m) => {
      if (!this.unitOfWork.isSerialized) {
        await m.query('SELECT pg_advisory_xact_lock(hashtext($1))', [WEBHOOK_CLAIM_LOCK]);
      }
      const promotedLimit = limit * PROMOTED_PER_CLAIM_BATCHES;
      let claimed: WebhookDelivery[] = [];
      for (let promotions = 0; promotions < PROMOTIONS_PER_CLAIM; promotions++) {
        const promoted = await this.promoteWithin(m, promotedLimit);
        claimed = [...claimed, ...(await this.claimPromoted(m, claim, limit - claimed.length))];
        // A short promotion emptied the queue; a full one may have moved only held-back rows.
        if (claimed.length >= limit || promoted < promotedLimit) {
          break;
        }
      }
      // In event order: the order an account's deliveries are sent in.
      return claimed.sort((a, b) => (a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0));
    });
  }

  /** Claims from `webhook_deliveries` (see claimDue), inside `manager`'s transaction. */
  private claimPromoted(
    manager: EntityManager,
    claim: OutboxClaim,
    limit: number,
  ): Promise<WebhookDelivery[]> {
    const enabled = this.unitOfWork.isSerialized ? '1' : 'TRUE';
    const table = `"${this.rows.table}"`;
    return claimDueRows(manager, WebhookDelivery, claim, limit, {
      skipLocked: !this.unitOfWork.isSerialized,
      orderBy: 'row.eventId',
      open: (due) =>
        due
          .where("row.state = 'pending'")
          .andWhere(
            `NOT EXISTS (SELECT 1 FROM ${table} h WHERE ${heldDeliveries('h')} ` +
              'AND h."subscriptionId" = "row"."subscriptionId" ' +
              'AND h."accountId" = "row"."accountId" AND h."eventId" < "row"."eventId" ' +
              'AND (h."nextAttemptAt" > :now OR h."claimedUntil" > :now))',
            { now: claim.now },
          )
          .andWhere(
            `EXISTS (SELECT 1 FROM "${this.subscriptionsTable}" ws ` +
              `WHERE ws."id" = "row"."subscriptionId" AND ws."isEnabled" = ${enabled})`,
          ),
    });
  }

  /**
   * Lets go of claimed deliveries that were not attempted (they wait behind an earlier one of
   * their account that failed), uncounting the attempt their claim counted.
   */
  async release(deliveries: readonly WebhookDelivery[]): Promise<void> {
    for (const [claim, ids] of idsByClaim(deliveries)) {
      await this.unitOfWork.run((m) =>
        m
          .createQueryBuilder()
          .update(WebhookDelivery)
          .set({ claimedBy: null, claimedUntil: null, attempts: () => '"attempts" - 1' })
          .where({ id: In(ids), claimedBy: claim })
          .execute(),
      );
    }
  }

  /**
   * Delivered: final, for a batch of one claim in one statement. Returns how many were still held
   * (one whose claim lapsed meanwhile is another instance's now, which delivers it again).
   */
  async deliveredAll(deliveries: readonly WebhookDelivery[], at: Date): Promise<number> {
    let recorded = 0;
    for (const [claim, ids] of idsByClaim(deliveries)) {
      const result = await this.unitOfWork.run((m) =>
        m.update(
          WebhookDelivery,
          { id: In(ids), claimedBy: claim },
          {
            state: 'delivered',
            finishedAt: at,
            lastError: null,
            claimedBy: null,
            claimedUntil: null,
          },
        ),
      );
      recorded += result.affected ?? 0;
    }
    return recorded;
  }

  /** Given up after the last attempt (or at once, for a destination that cannot work): dead. */
  async dead(delivery: WebhookDelivery, at: Date, lastError: string): Promise<boolean> {
    return this.finish(delivery, { state: 'dead', finishedAt: at, lastError });
  }

  /** Releases the claim and sets the next attempt. */
  async retryAt(delivery: WebhookDelivery, at: Date, lastError: string): Promise<boolean> {
    return this.finish(delivery, { nextAttemptAt: at, lastError });
  }

  private async finish(
    delivery: WebhookDelivery,
    fields: Partial<Pick<WebhookDelivery, 'state' | 'finishedAt' | 'nextAttemptAt' | 'lastError'>>,
  ): Promise<boolean> {
    const result = await this.unitOfWork.run((m) =>
      m.update(
        WebhookDelivery,
        { id: delivery.id, claimedBy: delivery.claimedBy ?? IsNull() },
        { ...fields, claimedBy: null, claimedUntil: null },
      ),
    );
    return result.affected === 1;
  }

  /** Dead deliveries, oldest event first (IDX_webhook_deliveries_state_eventId). */
  deadOnes(limit: number): Promise<WebhookDelivery[]> {
    return this.unitOfWork.run((m) =>
      m.find(WebhookDelivery, { where: { state: 'dead' }, order: { eventId: 'ASC' }, take: limit }),
    );
  }

  /**
   * Makes dead deliveries pending again, due at `at`, with a fresh count of attempts: the one
   * with `id`, or every one (null). Returns how many, inside the caller's transaction.
   */
  async replayWithin(manager: EntityManager, id: string | null, at: Date): Promise<number> {
    const result = await manager.update(
      WebhookDelivery,
      id === null ? { state: 'dead' } : { id, state: 'dead' },
      {
        state: 'pending',
        attempts: 0,
        nextAttemptAt: at,
        finishedAt: null,
        lastError: null,
        claimedBy: null,
        claimedUntil: null,
      },
    );
    // A replayed delivery comes before the later pending ones of its account: it waits for the
    // latest retry among them, so that none of them goes before an earlier one still waiting.
    const table = `"${this.rows.table}"`;
    // Only a held one can be waiting for a retry: the condition reads the index on those.
    const later =
      `FROM ${table} later WHERE ${heldDeliveries('later')} ` +
      `AND later."subscriptionId" = ${table}."subscriptionId" ` +
      `AND later."accountId" = ${table}."accountId" AND later."eventId" > ${table}."eventId"`;
    const waits = manager
      .createQueryBuilder()
      .update(WebhookDelivery)
      .set({ nextAttemptAt: () => `(SELECT MAX(later."nextAttemptAt") ${later})` })
      .where(`"state" = 'pending' AND "attempts" = 0 AND "nextAttemptAt" = :at`, { at })
      .andWhere(`EXISTS (SELECT 1 ${later} AND later."nextAttemptAt" > :at)`, { at });
    await (id === null ? waits : waits.andWhere('"id" = :id', { id })).execute();
    return result.affected ?? 0;
  }

  /** When the oldest queued or pending delivery's event happened, or null when none waits. */
  async oldestPendingAt(): Promise<Date | null> {
    const [queued, pending] = await this.unitOfWork.run(async (m) => [
      await m.findOne(WebhookQueued, {
        select: { eventId: true, subscriptionId: true, occurredAt: true },
        where: {},
        order: { eventId: 'ASC', subscriptionId: 'ASC' },
      }),
      await m.findOne(WebhookDelivery, {
        select: { id: true, occurredAt: true, eventId: true },
        where: { state: 'pending' },
        order: { eventId: 'ASC' },
      }),
    ]);
    const times = [queued?.occurredAt, pending?.occurredAt].filter((at) => at !== undefined);
    return times.length === 0 ? null : new Date(Math.min(...times.map((at) => at.getTime())));
  }

  /** Deletes deliveries delivered before `cutoff`; returns how many. */
  async purgeDeliveredBefore(cutoff: Date): Promise<number> {
    const result = await this.unitOfWork.run((m) =>
      m.delete(WebhookDelivery, { state: In(['delivered']), finishedAt: LessThan(cutoff) }),
    );
    return result.affected ?? 0;
  }
}

/** What the subscriptions' `events` must contain for `record`'s type: `,type,`. */
function typeNeedle(record: AuthEventRecord): string {
  return `,${record.event.type},`;
}

/** The ids of `deliveries` by the claim that holds them; unclaimed ones are no claim's to record. */
function idsByClaim(deliveries: readonly WebhookDelivery[]): Map<string, string[]> {
  const byClaim = new Map<string, string[]>();
  for (const { id, claimedBy } of deliveries) {
    if (claimedBy !== null) {
      byClaim.set(claimedBy, [...(byClaim.get(claimedBy) ?? []), id]);
    }
  }
  return byClaim;
}
