import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { timestampType } from '../column-types.js';

/**
 * What a change's transaction writes for a webhook is now one row appended to `webhook_queue`,
 * keyed in event order, which the sender moves into `webhook_deliveries` when it claims. There,
 * the index a claim needs to keep an account's events in order holds only the deliveries that
 * can hold others back (claimed, retrying or replayed): `IDX_webhook_deliveries_order` indexed
 * every delivery by account, so each row landed on a page of its own account. On SQLite a
 * subscribed refresh wrote about a quarter more pages for it (decision 0050, Cost).
 */
export class WebhookQueue1798800000000 implements MigrationInterface {
  name = 'WebhookQueue1798800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "IDX_webhook_deliveries_order"');
    await queryRunner.query(
      'CREATE INDEX "IDX_webhook_deliveries_held" ON "webhook_deliveries" ' +
        `("subscriptionId", "accountId", "eventId") WHERE "state" = 'pending' ` +
        `AND ("nextAttemptAt" <> "occurredAt" OR "claimedBy" IS NOT NULL)`,
    );
    await queryRunner.createTable(
      new Table({
        name: 'webhook_queue',
        withoutRowid: true,
        columns: [
          { name: 'eventId', type: 'varchar', length: '36', isPrimary: true },
          { name: 'subscriptionId', type: 'varchar', length: '36', isPrimary: true },
          { name: 'type', type: 'varchar', length: '64' },
          { name: 'accountId', type: 'varchar', length: '36', isNullable: true },
          { name: 'sessionId', type: 'varchar', length: '36', isNullable: true },
          { name: 'ip', type: 'varchar', length: '64' },
          { name: 'occurredAt', type: timestampType(queryRunner) },
        ],
        foreignKeys: [
          {
            name: 'FK_webhook_queue_subscriptionId',
            columnNames: ['subscriptionId'],
            referencedTableName: 'webhook_subscriptions',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Queued events become the pending deliveries they would have become.
    await queryRunner.query(
      'INSERT INTO "webhook_deliveries" ("id", "subscriptionId", "eventId", "type", "accountId", ' +
        '"sessionId", "ip", "occurredAt", "state", "attempts", "nextAttemptAt") ' +
        `SELECT 'msg_' || "eventId" || '_' || "subscriptionId", "subscriptionId", "eventId", ` +
        `"type", "accountId", "sessionId", "ip", "occurredAt", 'pending', 0, "occurredAt" ` +
        'FROM "webhook_queue"',
    );
    await queryRunner.dropTable('webhook_queue');
    await queryRunner.query('DROP INDEX "IDX_webhook_deliveries_held"');
    await queryRunner.query(
      'CREATE INDEX "IDX_webhook_deliveries_order" ON "webhook_deliveries" ' +
        '("subscriptionId", "accountId", "state", "eventId")',
    );
  }
}
