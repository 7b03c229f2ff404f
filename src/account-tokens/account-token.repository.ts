import { Injectable } from '@nestjs/common';
import { In, type EntityManager } from 'typeorm';
import { UnitOfWork } from '../database/unit-of-work.js';
import { AccountToken, type AccountTokenPurpose } from './entities/account-token.entity.js';

/** The queries on `account_tokens`, on both engines. Used by the auth module's services only. */
@Injectable()
export class AccountTokenRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** The account's live token for `purpose`, inside the caller's transaction. */
  findOf(
    manager: EntityManager,
    userId: string,
    purpose: AccountTokenPurpose,
  ): Promise<AccountToken | null> {
    return manager.findOneBy(AccountToken, { userId, purpose });
  }

  findByHash(tokenHash: string): Promise<AccountToken | null> {
    return this.unitOfWork.run((m) => m.findOneBy(AccountToken, { tokenHash }));
  }

  /** Stores `token` in place of the account's token of the same purpose. */
  async replace(manager: EntityManager, token: AccountToken): Promise<void> {
    await manager.delete(AccountToken, { userId: token.userId, purpose: token.purpose });
    await manager.insert(AccountToken, token);
  }

  /** Deletes the token if it is still there: true for the one caller that used it. */
  async consume(manager: EntityManager, token: AccountToken): Promise<boolean> {
    const result = await manager.delete(AccountToken, { id: token.id });
    return result.affected === 1;
  }

  async deleteOf(
    manager: EntityManager,
    userId: string,
    purposes: readonly AccountTokenPurpose[],
  ): Promise<void> {
    await manager.delete(AccountToken, { userId, purpose: In([...purposes]) });
  }
}
