import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { UnitOfWork } from '../database/unit-of-work.js';
import { EmailCode } from './entities/email-code.entity.js';

/**
 * The queries on `email_codes`, on both engines; the only code that names the table. Every
 * write is conditional on the row being as it was read (its id and its count of wrong tries), so
 * two attempts on one code, on any instances, act as if one came after the other.
 */
@Injectable()
export class EmailCodeRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** The account's live code (IDX_email_codes_userId); inside `manager`'s transaction if given. */
  findOf(userId: string, manager?: EntityManager): Promise<EmailCode | null> {
    return manager === undefined
      ? this.unitOfWork.run((m) => m.findOneBy(EmailCode, { userId }))
      : manager.findOneBy(EmailCode, { userId });
  }

  /** The code a link's token belongs to (IDX_email_codes_tokenHash). */
  findByTokenHash(tokenHash: string): Promise<EmailCode | null> {
    return this.unitOfWork.run((m) => m.findOneBy(EmailCode, { tokenHash }));
  }

  /** Stores `code` in place of the account's code, inside the caller's transaction. */
  async replace(manager: EntityManager, code: EmailCode): Promise<void> {
    await manager.delete(EmailCode, { userId: code.userId });
    await manager.insert(EmailCode, code);
  }

  /**
   * Counts one wrong try of `seen`, or deletes it when that try reaches `maxAttempts`; false
   * (nothing written) when the row is gone or another try was counted since it was read.
   */
  async countWrongTry(
    manager: EntityManager,
    seen: EmailCode,
    maxAttempts: number,
  ): Promise<boolean> {
    const match = { id: seen.id, attempts: seen.attempts };
    const result =
      seen.attempts + 1 >= maxAttempts
        ? await manager.delete(EmailCode, match)
        : await manager.update(EmailCode, match, { attempts: seen.attempts + 1 });
    return result.affected === 1;
  }

  /** Uses `seen` up: true for the one caller that found it as it was read. */
  async consume(manager: EntityManager, seen: EmailCode): Promise<boolean> {
    const deleted = await manager.delete(EmailCode, { id: seen.id, attempts: seen.attempts });
    return deleted.affected === 1;
  }
}
