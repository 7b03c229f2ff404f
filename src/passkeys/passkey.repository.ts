import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { UnitOfWork } from '../database/unit-of-work.js';
import { Passkey } from './entities/passkey.entity.js';

/** What a verified assertion changes on its passkey. */
export interface PasskeyUse {
  readonly counter: number;
  readonly isBackedUp: boolean;
  readonly at: Date;
}

/**
 * The queries on `passkeys`, on both engines: by id and owner (the routes), by credential id (an
 * assertion names only that), by owner (the list). Each has its index.
 */
@Injectable()
export class PasskeyRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  listOf(userId: string): Promise<Passkey[]> {
    return this.unitOfWork.run((m) =>
      m.find(Passkey, { where: { userId }, order: { createdAt: 'ASC', id: 'ASC' } }),
    );
  }

  countOf(userId: string, manager: EntityManager): Promise<number> {
    return manager.countBy(Passkey, { userId });
  }

  findByCredentialId(credentialId: string): Promise<Passkey | null> {
    return this.unitOfWork.run((m) => m.findOneBy(Passkey, { credentialId }));
  }

  findOf(userId: string, id: string, manager?: EntityManager): Promise<Passkey | null> {
    return manager === undefined
      ? this.unitOfWork.run((m) => m.findOneBy(Passkey, { id, userId }))
      : manager.findOneBy(Passkey, { id, userId });
  }

  /** Inserts a new passkey; a credential id stored before fails as a unique violation. */
  async insert(manager: EntityManager, passkey: Passkey): Promise<void> {
    await manager.insert(Passkey, passkey);
  }

  /** False when the account has no such passkey. */
  async rename(manager: EntityManager, userId: string, id: string, name: string): Promise<boolean> {
    const result = await manager.update(Passkey, { id, userId }, { name });
    return result.affected === 1;
  }

  /** False when the account has no such passkey (any more). */
  async remove(manager: EntityManager, userId: string, id: string): Promise<boolean> {
    const result = await manager.delete(Passkey, { id, userId });
    return result.affected === 1;
  }

  /** How many passkeys the account had. */
  async removeAllOf(manager: EntityManager, userId: string): Promise<number> {
    const result = await manager.delete(Passkey, { userId });
    return result.affected ?? 0;
  }

  /**
   * Records a verified use if the counter is still the one the verification was checked against:
   * true for one caller per counter value, across instances, since the condition and the write
   * are one statement. False also when the passkey was deleted meanwhile.
   */
  async recordUse(passkey: Passkey, use: PasskeyUse): Promise<boolean> {
    const result = await this.unitOfWork.run((m) =>
      m.update(
        Passkey,
        { id: passkey.id, counter: passkey.counter },
        { counter: use.counter, isBackedUp: use.isBackedUp, lastUsedAt: use.at },
      ),
    );
    return result.affected === 1;
  }
}
