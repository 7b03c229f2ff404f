import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { timestampType } from '../column-types.js';

/**
 * The outbox: mails written in the transaction of the change they announce, delivered later by
 * the sender of any instance. A mail goes with its account; a requested password reset has no
 * account yet.
 */
export class CreateMailOutbox1796000000002 implements MigrationInterface {
  name = 'CreateMailOutbox1796000000002';

  async up(queryRunner: QueryRunner): Promise<void> {
    const timestamp = timestampType(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'mail_outbox',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'kind', type: 'varchar', length: '40' },
          { name: 'state', type: 'varchar', length: '16' },
          { name: 'userId', type: 'varchar', length: '36', isNullable: true },
          { name: 'recipient', type: 'varchar', length: '320' },
          { name: 'params', type: 'text' },
          { name: 'secret', type: 'varchar', length: '255', isNullable: true },
          { name: 'createdAt', type: timestamp },
          { name: 'attempts', type: 'integer', default: 0 },
          { name: 'nextAttemptAt', type: timestamp },
          { name: 'claimedBy', type: 'varchar', length: '36', isNullable: true },
          { name: 'claimedUntil', type: timestamp, isNullable: true },
          { name: 'finishedAt', type: timestamp, isNullable: true },
          { name: 'lastError', type: 'varchar', length: '100', isNullable: true },
        ],
        indices: [
          { name: 'IDX_mail_outbox_state_nextAttemptAt', columnNames: ['state', 'nextAttemptAt'] },
          { name: 'IDX_mail_outbox_userId', columnNames: ['userId'] },
        ],
        foreignKeys: [
          {
            name: 'FK_mail_outbox_userId',
            columnNames: ['userId'],
            referencedTableName: 'users',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('mail_outbox');
  }
}
