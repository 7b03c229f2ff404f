import { Injectable } from '@nestjs/common';
import { IsNull, type EntityManager } from 'typeorm';
import { isUniqueViolation } from '../../database/unique-violation.js';
import { UnitOfWork } from '../../database/unit-of-work.js';
import { AdminKey } from './entities/admin-key.entity.js';

/** The queries on `admin_keys`, on both engines; the only code that names the table. */
@Injectable()
export class AdminKeyRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** Inserts `key` in the caller's transaction; false when its name is taken. */
  async insert(manager: EntityManager, key: AdminKey): Promise<boolean> {
    try {
      await manager.insert(AdminKey, key);
      return true;
    } catch (error: unknown) {
      if (isUniqueViolation(error)) {
        return false;
      }
      throw error;
    }
  }

  /** The key stored under `keyDigest`, revoked or not (UQ_admin_keys_keyDigest). */
  findByDigest(keyDigest: string): Promise<AdminKey | null> {
    return this.unitOfWork.run((m) => m.findOneBy(AdminKey, { keyDigest }));
  }

  /** Whether any key is unrevoked (IDX_admin_keys_revokedAt). */
  async anyActive(): Promise<boolean> {
    const found = await this.unitOfWork.run((m) =>
      m.findOne(AdminKey, { select: { id: true }, where: { revokedAt: IsNull() } }),
    );
    return found !== null;
  }

  /** Every key, oldest first: a handful, for the CLI. */
  list(): Promise<AdminKey[]> {
    return this.unitOfWork.run((m) => m.find(AdminKey, { order: { createdAt: 'ASC', id: 'ASC' } }));
  }

  /**
   * Revokes the unrevoked key named `name` in the caller's transaction; returns it, or null when
   * no unrevoked key has the name.
   */
  async revoke(manager: EntityManager, name: string, at: Date): Promise<AdminKey | null> {
    const key = await manager.findOneBy(AdminKey, { name, revokedAt: IsNull() });
    if (key === null) {
      return null;
    }
    const result = await manager.update(
      AdminKey,
      { id: key.id, revokedAt: IsNull() },
      {
        revokedAt: at,
      },
    );
    return result.affected === 1 ? Object.assign(key, { revokedAt: at }) : null;
  }
}
