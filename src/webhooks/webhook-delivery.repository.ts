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
import { WebhookDelivery } from './entities/webhook-delivery.entity.js';
import { ALL_EVENTS, WebhookSubscription } from './entities/webhook-subscription.entity.js';
import { webhookFactsOf } from './webhook-events.js';

/** The columns the statement computes from the subscription row rather than take as values. */
const FROM_SUBSCRIPTION = new Set(['id', 'subscriptionId']);

/**
 * The queries on `webhook_deliveries`, on both engines; the only code that names the table. As
 * the DeliverySink, it queues an event for the subscriptions that want it inside the event's own
 * transaction: one `INSERT … SELECT` over `webhook_subscriptions`, which the database matches
 * (enabled, and `*` or the type among the wanted ones), so a subscription committed before the
 * event's statement is always seen and no cache can be stale (decision 0050). When no
 * subscription wants the event the statement inserts nothing.
 */
@Injectable()
export class WebhookDeliveryRepository implements DeliverySink {
  private readonly rows: EntityRows<WebhookDelivery>;
  private readonly subscriptionsTable: string;
  private sqliteInsert: Statement<unknown[]> | undefined;
  private postgresInsert: string | undefined;
  private readonly queuedListeners: (() => void)[] = [];

  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly dataSource: DataSource,
  ) {
    this.rows = new EntityRows(dataSource, WebhookDelivery);
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
    // In the statement's order: the id's event id where the id is, the facts, then the type.
    const facts = this.valuesOf(record, eventId, {});
    const values = this.rows.columns.flatMap((column) =>
      column.propertyName === 'id'
        ? [eventId]
        : column.propertyName === 'subscriptionId'
          ? []
          : [facts.shift()],
    );
    const { changes } = statement.run(...values, `,${record.event.type},`);
    if (changes > 0) {
      this.unitOfWork.afterCommit(null, () => this.queued());
    }
  }

  /**
   * PostgreSQL: `INSERT … SELECT … FROM <source>, subscriptions WHERE …`, parameters from
   * `$first`: the facts not `computed`, then the type to match. The delivery's id is made of the
   * event id (its parameter) and the subscription's.
   */
  insertSelectSql(first: number, source: string, computed: ComputedFacts): string {
    let next = first;
    let eventIdParameter = '';
    const expressions = this.rows.columns.map((column) => {
      const property = column.propertyName;
      if (property === 'subscriptionId') {
        return 'ws."id"';
      }
      if (property === 'id') {
        return null;
      }
      const given = computed[property as keyof ComputedFacts];
      if (given !== undefined) {
        return given;
      }
      const parameter = `$${next++}::${postgresTypeOf(this.dataSource, column)}`;
      if (property === 'eventId') {
        eventIdParameter = parameter;
      }
      return parameter;
    });
    const typeParameter = `$${next}::text`;
    const select = expressions.map((expression) =>
      expression === null ? `'msg_' || ${eventIdParameter} || '_' || ws."id"` : expression,
    );
    const from = source === '' ? '' : `${source}, `;
    return (
      `INSERT INTO "${this.rows.table}" (${this.rows.names()}) SELECT ${select.join(', ')} ` +
      `FROM ${from}"${this.subscriptionsTable}" ws WHERE ws."isEnabled" ` +
      `AND (ws."events" = '${ALL_EVENTS}' OR strpos(ws."events", ${typeParameter}) > 0)`
    );
  }

  insertSelectValues(record: AuthEventRecord, eventId: string, computed: ComputedFacts): unknown[] {
    return [...this.valuesOf(record, eventId, computed), `,${record.event.type},`];
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

  /** The SQLite statement: the id as `'msg_' || ? || '_' || ws.id`, then the facts, then the type. */
  private sqliteInsertSql(): string {
    const select = this.rows.columns.map((column) => {
      if (column.propertyName === 'id') {
        return `'msg_' || ? || '_' || ws."id"`;
      }
      return column.propertyName === 'subscriptionId' ? 'ws."id"' : '?';
    });
    return (
      `INSERT INTO "${this.rows.table}" (${this.rows.names()}) SELECT ${select.join(', ')} ` +
      `FROM "${this.subscriptionsTable}" ws WHERE ws."isEnabled" = 1 ` +
      `AND (ws."events" = '${ALL_EVENTS}' OR instr(ws."events", ?) > 0)`
    );
  }

  /** The driver's values of the columns taken as values (not computed, not the subscription's). */
  private valuesOf(record: AuthEventRecord, eventId: string, computed: ComputedFacts): unknown[] {
    const facts = webhookFactsOf(record);
    const delivery = Object.assign(new WebhookDelivery(), {
      id: '',
      subscriptionId: '',
      eventId,
      type: facts.type,
      accountId: facts.accountId,
      sessionId: facts.sessionId,
      ip: facts.ip,
      occurredAt: facts.occurredAt,
      state: 'pending',
      attempts: 0,
      nextAttemptAt: facts.occurredAt,
      claimedBy: null,
      claimedUntil: null,
      finishedAt: null,
      lastError: null,
    } satisfies WebhookDelivery);
    const values = this.rows.values(delivery);
    return values.filter((_value, i) => {
      const property = this.rows.columns[i].propertyName;
      return !FROM_SUBSCRIPTION.has(property) && !(property in computed);
    });
  }

  /**
   * Claims up to `limit` pending deliveries that are due, of enabled subscriptions, oldest event
   * first, each with every earlier pending delivery of its subscription and account in the same
   * claim: a later event of an account waits while an earlier one to the same subscription is
   * not due yet (retrying) or held by another claim, so one receiver sees an account's events in
   * the order they were recorded, and a batch may carry several events of one account (the sender
   * sends them one after the other). Dead ones no longer hold the line.
   *
   * Taken in event order, the earlier deliveries a claimed one needs come before it, so the scan
   * stops after `limit` rows however long the queue, unless rows wait behind a retrying one. Only
   * an account's oldest pending delivery can be not due or held: a claim takes an account's
   * deliveries from its oldest on, the sender retries one only after the earlier ones left the
   * queue and hands back the rest, and a replayed one waits for the account's later retries (see
   * replayWithin). So the check looks at that one row. On PostgreSQL another instance may be
   * claiming the oldest one at the same moment (its rows are skipped, not seen as claimed): the
   * claim then lets go of the later ones it cannot send yet.
   */
  claimDue(claim: OutboxClaim, limit: number): Promise<WebhookDelivery[]> {
    const enabled = this.unitOfWork.isSerialized ? '1' : 'TRUE';
    const table = `"${this.rows.table}"`;
    return this.unitOfWork.transaction(async (m) => {
      const claimed = await claimDueRows(m, WebhookDelivery, claim, limit, {
        skipLocked: !this.unitOfWork.isSerialized,
        orderBy: 'row.eventId',
        open: (due) =>
          due
            .where("row.state = 'pending'")
            .andWhere(
              // Only the account's oldest pending one can hold the others back (see above): one
              // look-up a row, however long the account's queue.
              `NOT EXISTS (SELECT 1 FROM ${table} head WHERE head."id" = ` +
                `(SELECT h."id" FROM ${table} h ` +
                'WHERE h."subscriptionId" = "row"."subscriptionId" ' +
                `AND h."accountId" = "row"."accountId" AND h."state" = 'pending' ` +
                'ORDER BY h."eventId" LIMIT 1) ' +
                'AND head."id" <> "row"."id" ' +
                'AND (head."nextAttemptAt" > :now OR head."claimedUntil" > :now))',
              { now: claim.now },
            )
            .andWhere(
              `EXISTS (SELECT 1 FROM "${this.subscriptionsTable}" ws ` +
                `WHERE ws."id" = "row"."subscriptionId" AND ws."isEnabled" = ${enabled})`,
            ),
      });
      // One writer at a time on SQLite: nothing can have claimed an earlier one meanwhile.
      const kept =
        this.unitOfWork.isSerialized ||
        claimed.length === 0 ||
        (await this.releaseOutOfOrder(m, claim)) === 0
          ? claimed
          : await m.find(WebhookDelivery, { where: { claimedBy: claim.id } });
      // In event order: the order an account's deliveries are sent in.
      return kept.sort((a, b) => (a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0));
    });
  }

  /**
   * Lets go, inside the claim's transaction, of the claimed deliveries that have an earlier
   * pending one of their subscription and account outside this claim, uncounting their attempt.
   */
  private async releaseOutOfOrder(manager: EntityManager, claim: OutboxClaim): Promise<number> {
    const table = `"${this.rows.table}"`;
    const result = await manager.query<[unknown[], number]>(
      `UPDATE ${table} SET "claimedBy" = NULL, "claimedUntil" = NULL, "attempts" = "attempts" - 1 ` +
        `WHERE "claimedBy" = $1 AND EXISTS (SELECT 1 FROM ${table} earlier ` +
        `WHERE earlier."subscriptionId" = ${table}."subscriptionId" ` +
        `AND earlier."accountId" = ${table}."accountId" ` +
        `AND earlier."state" = 'pending' AND earlier."eventId" < ${table}."eventId" ` +
        `AND earlier."claimedBy" IS DISTINCT FROM $1)`,
      [claim.id],
    );
    return result[1];
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
    const later =
      `FROM ${table} later WHERE later."subscriptionId" = ${table}."subscriptionId" ` +
      `AND later."accountId" = ${table}."accountId" AND later."state" = 'pending' ` +
      `AND later."eventId" > ${table}."eventId"`;
    const waits = manager
      .createQueryBuilder()
      .update(WebhookDelivery)
      .set({ nextAttemptAt: () => `(SELECT MAX(later."nextAttemptAt") ${later})` })
      .where(`"state" = 'pending' AND "attempts" = 0 AND "nextAttemptAt" = :at`, { at })
      .andWhere(`EXISTS (SELECT 1 ${later} AND later."nextAttemptAt" > :at)`, { at });
    await (id === null ? waits : waits.andWhere('"id" = :id', { id })).execute();
    return result.affected ?? 0;
  }

  /** When the oldest pending delivery's event happened, or null when none is pending. */
  async oldestPendingAt(): Promise<Date | null> {
    const oldest = await this.unitOfWork.run((m) =>
      m.findOne(WebhookDelivery, {
        select: { id: true, occurredAt: true, eventId: true },
        where: { state: 'pending' },
        order: { eventId: 'ASC' },
      }),
    );
    return oldest?.occurredAt ?? null;
  }

  /** Deletes deliveries delivered before `cutoff`; returns how many. */
  async purgeDeliveredBefore(cutoff: Date): Promise<number> {
    const result = await this.unitOfWork.run((m) =>
      m.delete(WebhookDelivery, { state: In(['delivered']), finishedAt: LessThan(cutoff) }),
    );
    return result.affected ?? 0;
  }
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
