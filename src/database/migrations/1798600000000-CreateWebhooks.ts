import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { timestampType } from '../column-types.js';

/**
 * Webhook subscriptions, and the deliveries written in the transaction of each event they want
 * (decision 0050). A delivery goes with its subscription; it names its account without a foreign
 * key, as an account's deletion is itself delivered.
 */
export class CreateWebhooks1798600000000 implements MigrationInterface {
  name = 'CreateWebhooks1798600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const timestamp = timestampType(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'webhook_subscriptions',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'url', type: 'varchar', length: '2048' },
          { name: 'events', type: 'text' },
          { name: 'secret', type: 'varchar', length: '255' },
          { name: 'isEnabled', type: 'boolean' },
          { name: 'createdAt', type: timestamp },
        ],
        // Every recorded event looks its subscribers up through it.
        indices: [{ name: 'IDX_webhook_subscriptions_isEnabled', columnNames: ['isEnabled'] }],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'webhook_deliveries',
        columns: [
          { name: 'id', type: 'varchar', length: '80', isPrimary: true },
          { name: 'subscriptionId', type: 'varchar', length: '36' },
          { name: 'eventId', type: 'varchar', length: '36' },
          { name: 'type', type: 'varchar', length: '64' },
          { name: 'accountId', type: 'varchar', length: '36', isNullable: true },
          { name: 'sessionId', type: 'varchar', length: '36', isNullable: true },
          { name: 'ip', type: 'varchar', length: '64' },
          { name: 'occurredAt', type: timestamp },
          { name: 'state', type: 'varchar', length: '16' },
          { name: 'attempts', type: 'integer', default: 0 },
          { name: 'nextAttemptAt', type: timestamp },
          { name: 'claimedBy', type: 'varchar', length: '36', isNullable: true },
          { name: 'claimedUntil', type: timestamp, isNullable: true },
          { name: 'finishedAt', type: timestamp, isNullable: true },
          { name: 'lastError', type: 'varchar', length: '100', isNullable: true },
        ],
        indices: [
          {
            name: 'IDX_webhook_deliveries_state_nextAttemptAt',
            columnNames: ['state', 'nextAttemptAt'],
          },
          { name: 'IDX_webhook_deliveries_state_eventId', columnNames: ['state', 'eventId'] },
          {
            name: 'IDX_webhook_deliveries_order',
            columnNames: ['subscriptionId', 'accountId', 'state', 'eventId'],
          },
        ],
        foreignKeys: [
          {
            name: 'FK_webhook_deliveries_subscriptionId',
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
    await queryRunner.dropTable('webhook_deliveries');
    await queryRunner.dropTable('webhook_subscriptions');
  }
}
