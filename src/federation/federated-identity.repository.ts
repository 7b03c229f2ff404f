import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { UnitOfWork } from '../database/unit-of-work.js';
import { FederatedIdentity } from './entities/federated-identity.entity.js';

/** The queries on `federated_identities`; the only code that names the table. */
@Injectable()
export class FederatedIdentityRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  findByPair(
    issuer: string,
    subject: string,
    manager?: EntityManager,
  ): Promise<FederatedIdentity | null> {
    return manager === undefined
      ? this.unitOfWork.run((m) => m.findOneBy(FederatedIdentity, { issuer, subject }))
      : manager.findOneBy(FederatedIdentity, { issuer, subject });
  }

  /** The account's identities, oldest first; inside `manager`'s transaction if given. */
  listOf(userId: string, manager?: EntityManager): Promise<FederatedIdentity[]> {
    const list = (m: EntityManager) =>
      m.find(FederatedIdentity, { where: { userId }, order: { linkedAt: 'ASC', id: 'ASC' } });
    return manager === undefined ? this.unitOfWork.run(list) : list(manager);
  }

  /** Inserts inside the caller's transaction; a pair taken meanwhile is a unique violation. */
  async insert(m: EntityManager, identity: FederatedIdentity): Promise<void> {
    await m.insert(FederatedIdentity, identity);
  }

  /** The address the provider now gives and the time of this use. */
  async touch(m: EntityManager, id: string, email: string | null, at: Date): Promise<void> {
    await m.update(FederatedIdentity, { id }, { email, lastUsedAt: at });
  }

  async removeAllOf(m: EntityManager, userId: string): Promise<number> {
    const deleted = await m.delete(FederatedIdentity, { userId });
    return deleted.affected ?? 0;
  }

  /** True for the caller that deleted it; only the owner's. */
  async remove(m: EntityManager, userId: string, id: string): Promise<boolean> {
    const deleted = await m.delete(FederatedIdentity, { id, userId });
    return deleted.affected === 1;
  }

  count(m: EntityManager, userId: string): Promise<number> {
    return m.countBy(FederatedIdentity, { userId });
  }
}
