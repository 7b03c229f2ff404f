import type { EntityManager, EntityTarget, ObjectLiteral, SelectQueryBuilder } from 'typeorm';

/**
 * Deletes, in one statement, the rows whose ids `batch` selects: the batched purges' step. With
 * `skipLocked` (PostgreSQL, several instances) the selection locks its rows and passes over rows
 * another instance is already deleting, so two purges never wait on each other.
 */
export async function deleteSelected<T extends ObjectLiteral>(
  m: EntityManager,
  entity: EntityTarget<T>,
  batch: SelectQueryBuilder<T>,
  skipLocked: boolean,
): Promise<number> {
  if (skipLocked) {
    batch.setLock('pessimistic_write').setOnLocked('skip_locked');
  }
  const result = await m
    .createQueryBuilder()
    .delete()
    .from(entity)
    .where(`id IN (${batch.getQuery()})`)
    .setParameters(batch.getParameters())
    .execute();
  return result.affected ?? 0;
}
