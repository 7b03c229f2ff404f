import { DataSource } from 'typeorm';
import { parseConnectionString } from '../src/config/settings/connection-string.js';
import { ENTITIES } from '../src/database/data-source.js';
import { dataSourceOptions } from '../src/database/data-source-options.js';
import { WebhookQueue1798800000000 } from '../src/database/migrations/1798800000000-WebhookQueue.js';
import { MIGRATIONS } from '../src/database/migrations/index.js';
import { toSqliteDatetime } from '../src/database/sqlite-datetime.js';
import { WebhookDelivery } from '../src/webhooks/entities/webhook-delivery.entity.js';
import { buildDatabaseConfig } from './factories/database-config.factory.js';
import { createTestDatabase, onPostgres, type TestDatabase } from './utils/test-database.js';

const SUBSCRIPTION_ID = '5e9d6ba4-fd21-4fdb-aff1-774fca48e50e';
const EVENT_ID = '01a21eac-062c-73bf-bd70-5c877e9e227d';
const ACCOUNT_ID = '4aeea7df-6f95-4539-8519-e661b33ea933';
const OCCURRED_AT = new Date('2026-11-27T20:21:59.980Z');

describe('migration WebhookQueue', () => {
  let database: TestDatabase;
  let dataSource: DataSource;

  const timestamp = (date: Date): string =>
    onPostgres ? date.toISOString() : toSqliteDatetime(date);

  beforeEach(async () => {
    database = await createTestDatabase();
    dataSource = new DataSource({
      ...dataSourceOptions(buildDatabaseConfig(parseConnectionString(database.connectionString)), {
        entities: ENTITIES,
      }),
      // Up to this one, so that undoing the last migration reverts it.
      migrations: MIGRATIONS.slice(0, MIGRATIONS.indexOf(WebhookQueue1798800000000) + 1),
    });
    await dataSource.initialize();
    await dataSource.runMigrations({ transaction: 'all' });
    await database.query(
      `INSERT INTO "webhook_subscriptions" ("id", "url", "events", "secret", "isEnabled", "createdAt") ` +
        `VALUES ($1, 'https://example.com/hooks', '*', 'v1.x', $2, $3)`,
      [SUBSCRIPTION_ID, onPostgres ? true : 1, timestamp(OCCURRED_AT)],
    );
    await database.query(
      `INSERT INTO "webhook_queue" ("eventId", "subscriptionId", "type", "accountId", "sessionId", ` +
        `"ip", "occurredAt") VALUES ($1, $2, 'login_succeeded', $3, NULL, '203.0.113.7', $4)`,
      [EVENT_ID, SUBSCRIPTION_ID, ACCOUNT_ID, timestamp(OCCURRED_AT)],
    );
  });

  afterEach(async () => {
    if (dataSource.isInitialized) {
      await dataSource.destroy();
    }
    await database.drop();
  });

  it('should make a queued event the pending delivery it would have become when reverted, and migrate again', async () => {
    await dataSource.undoLastMigration({ transaction: 'all' });

    const queueLeft = await dataSource.createQueryRunner().hasTable('webhook_queue');
    const delivery = await dataSource.getRepository(WebhookDelivery).findOneByOrFail({
      eventId: EVENT_ID,
    });
    expect(queueLeft).toBe(false);
    expect(delivery).toMatchObject({
      id: `msg_${EVENT_ID}_${SUBSCRIPTION_ID}`,
      subscriptionId: SUBSCRIPTION_ID,
      type: 'login_succeeded',
      accountId: ACCOUNT_ID,
      sessionId: null,
      ip: '203.0.113.7',
      occurredAt: OCCURRED_AT,
      state: 'pending',
      attempts: 0,
      nextAttemptAt: OCCURRED_AT,
      claimedBy: null,
    });

    await dataSource.runMigrations({ transaction: 'all' });

    expect(await database.query('SELECT * FROM "webhook_queue"')).toEqual([]);
    expect(await dataSource.getRepository(WebhookDelivery).count()).toBe(1);
  });
});
