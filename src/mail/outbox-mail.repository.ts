import { Injectable } from '@nestjs/common';
import { In, IsNull, LessThan, type EntityManager } from 'typeorm';
import { UnitOfWork } from '../database/unit-of-work.js';
import { claimDueRows, type OutboxClaim } from '../outbox/outbox-claim.js';
import { OutboxMail, type MailKind, type MailState } from './entities/outbox-mail.entity.js';

/** A claim on mails: who holds them (a fresh id per claim) and until when. */
export type MailClaim = OutboxClaim;

const OPEN_STATES: MailState[] = ['requested', 'pending'];

/** The queries on `mail_outbox`, on both engines. Used by the mail module's services only. */
@Injectable()
export class OutboxMailRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** Inside the caller's transaction, so the mail commits with the change it announces. */
  async insert(manager: EntityManager, mail: OutboxMail): Promise<void> {
    await manager.insert(OutboxMail, mail);
  }

  /** Its own unit: a mail with nothing to commit alongside (a requested password reset). */
  async insertAlone(mail: OutboxMail): Promise<void> {
    await this.unitOfWork.run((m) => m.insert(OutboxMail, mail));
  }

  /** Claims up to `limit` open mails that are due (claimDueRows: the outbox's one claim). */
  claimDue(claim: MailClaim, limit: number): Promise<OutboxMail[]> {
    return this.unitOfWork.transaction((m) =>
      claimDueRows(m, OutboxMail, claim, limit, {
        skipLocked: !this.unitOfWork.isSerialized,
        open: (due) => due.where('row.state IN (:...states)', { states: OPEN_STATES }),
      }),
    );
  }

  /** A requested mail made ready, in the transaction that wrote its token. False: claim lost. */
  async prepare(
    manager: EntityManager,
    mail: OutboxMail,
    fields: Pick<OutboxMail, 'userId' | 'recipient' | 'params' | 'secret'>,
  ): Promise<boolean> {
    const result = await manager.update(
      OutboxMail,
      { id: mail.id, claimedBy: mail.claimedBy ?? IsNull() },
      { ...fields, state: 'pending' },
    );
    return result.affected === 1;
  }

  /** Deletes a claimed mail that turned out to have nothing to send. */
  async drop(manager: EntityManager, mail: OutboxMail): Promise<void> {
    await manager.delete(OutboxMail, { id: mail.id, claimedBy: mail.claimedBy ?? IsNull() });
  }

  /** Sent or given up: final, the sealed token cleared. False when the claim was lost meanwhile. */
  async finish(
    mail: OutboxMail,
    state: Extract<MailState, 'sent' | 'failed'>,
    at: Date,
    lastError: string | null,
    alongside: (m: EntityManager) => Promise<void>,
  ): Promise<boolean> {
    const result = await this.unitOfWork.transaction(async (m) => {
      const updated = await m.update(
        OutboxMail,
        { id: mail.id, claimedBy: mail.claimedBy ?? IsNull() },
        {
          state,
          finishedAt: at,
          secret: null,
          claimedBy: null,
          claimedUntil: null,
          lastError,
        },
      );
      await alongside(m);
      return updated;
    });
    return result.affected === 1;
  }

  /** Releases the claim and sets the next attempt. */
  async retryAt(
    mail: OutboxMail,
    at: Date,
    lastError: string,
    alongside: (m: EntityManager) => Promise<void>,
  ): Promise<void> {
    await this.unitOfWork.transaction(async (m) => {
      await m.update(
        OutboxMail,
        { id: mail.id, claimedBy: mail.claimedBy ?? IsNull() },
        { nextAttemptAt: at, claimedBy: null, claimedUntil: null, lastError },
      );
      await alongside(m);
    });
  }

  /** Deletes the open mails of these kinds to one account: their tokens are being replaced. */
  async cancelOpen(manager: EntityManager, userId: string, kinds: MailKind[]): Promise<void> {
    await manager.delete(OutboxMail, { userId, kind: In(kinds), state: In(OPEN_STATES) });
  }

  /** Deletes final mails older than `cutoff` (they hold addresses); returns how many. */
  async purgeFinishedBefore(cutoff: Date): Promise<number> {
    const result = await this.unitOfWork.run((m) =>
      m.delete(OutboxMail, { state: In(['sent', 'failed']), finishedAt: LessThan(cutoff) }),
    );
    return result.affected ?? 0;
  }
}
