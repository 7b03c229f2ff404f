import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook claims walk pending deliveries in event order (`IDX_webhook_deliveries_state_eventId`),
 * so the index on (state, nextAttemptAt) served nothing any more but a bad PostgreSQL plan under
 * stale statistics, while every delivery row, written in the transaction of the change that
 * caused it, paid for it: about ten of the sixty write calls a subscribed refresh made on SQLite
 * (decision 0050).
 */
export class DropWebhookDueIndex1798700000000 implements MigrationInterface {
  name = 'DropWebhookDueIndex1798700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "IDX_webhook_deliveries_state_nextAttemptAt"');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE INDEX "IDX_webhook_deliveries_state_nextAttemptAt" ON "webhook_deliveries" ("state", "nextAttemptAt")',
    );
  }
}
