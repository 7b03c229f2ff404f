import { Injectable } from '@nestjs/common';
import { IsNull, type EntityManager } from 'typeorm';
import { UnitOfWork } from '../database/unit-of-work.js';
import { SigningKey } from './entities/signing-key.entity.js';

/** The advisory lock that orders every change of the key set across instances. */
const KEY_SET_LOCK = 'signing-keys';

/**
 * The queries on `signing_keys`. The table is small (a key a rotation) and read whole, on a timer
 * and by the admin commands, never on a request. Every change runs in `changing`, which holds one
 * lock for the key set, so two instances (or an instance and the CLI) deciding on the same set,
 * e.g. that a first key is needed, take turns and the second sees what the first wrote.
 */
@Injectable()
export class SigningKeyRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  all(): Promise<SigningKey[]> {
    return this.unitOfWork.run((m) => m.find(SigningKey));
  }

  /** Runs `work` in one transaction holding the key set's lock; it reads the set afresh. */
  changing<T>(work: (unit: SigningKeyUnit) => Promise<T>): Promise<T> {
    return this.unitOfWork.transaction(async (m) => {
      await this.unitOfWork.lock(m, KEY_SET_LOCK);
      return work(new SigningKeyUnit(m));
    });
  }
}

/** The key set's writes, inside `SigningKeyRepository.changing`. */
export class SigningKeyUnit {
  constructor(readonly manager: EntityManager) {}

  all(): Promise<SigningKey[]> {
    return this.manager.find(SigningKey);
  }

  async insert(key: SigningKey): Promise<void> {
    await this.manager.insert(SigningKey, key);
  }

  /** Retires `kid` at `at` unless it already was; false when there was nothing to retire. */
  async retire(kid: string, at: Date): Promise<boolean> {
    const result = await this.manager.update(
      SigningKey,
      { kid, retiredAt: IsNull() },
      { retiredAt: at },
    );
    return (result.affected ?? 0) > 0;
  }

  /** Moves the activation of a key that has not activated yet to `at`. */
  async activate(kid: string, at: Date): Promise<void> {
    await this.manager.update(SigningKey, { kid }, { activatesAt: at });
  }
}
