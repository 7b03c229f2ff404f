import type { QueryRunner } from 'typeorm';

/** Timestamps are `datetime` text (UTC) on SQLite and `timestamptz` on PostgreSQL. */
export function timestampType(queryRunner: QueryRunner): string {
  return queryRunner.connection.options.type === 'postgres'
    ? 'timestamp with time zone'
    : 'datetime';
}
