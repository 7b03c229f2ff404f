import { Injectable } from '@nestjs/common';
import { In, IsNull, LessThan, type EntityManager } from 'typeorm';
import { UnitOfWork } from '../database/unit-of-work.js';
import { OutboxMail, type MailKind, type MailState } from './entities/outbox-mail.entity.js';

/** A claim on mails: who holds them (a fresh id per claim) and until when. */
export interface MailClaim {
  readonly id: string;
  readonly now: Date;
  readonly until: Date;
}

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

  /**
   * Claims up to `limit` open mails that are due and not claimed by anyone whose claim still
   * holds, and counts the attempt. The update re-checks the claim, so two senders that read the
   * same rows (two processes on one SQLite file) cannot both win one; on PostgreSQL the read
   * also skips rows another instance is claiming.
   */
  claimDue(claim: MailClaim, limit: number): Promise<OutboxMail[]> {
    return this.unitOfWork.transaction(async (m) => {
      const due = m
        .createQueryBuilder(OutboxMail, 'mail')
        .select('mail.id')
        .where('mail.state IN (:...states)', { states: OPEN_STATES })
        .andWhere('mail.nextAttemptAt <= :now', { now: claim.now })
        .andWhere('(mail.claimedUntil IS NULL OR mail.claimedUntil <= :now)', { now: claim.now })
        .orderBy('mail.nextAttemptAt')
        .addOrderBy('mail.id')
        .limit(limit);
      if (!this.unitOfWork.isSerialized) {
        due.setLock('pessimistic_write').setOnLocked('skip_locked');
      }
      const ids = (await due.getMany()).map((mail) => mail.id);
      if (ids.length === 0) {
        return [];
      }
      await m
        .createQueryBuilder()
        .update(OutboxMail)
        .set({
          claimedBy: claim.id,
          claimedUntil: claim.until,
          attempts: () => '"attempts" + 1',
        })
        .where({ id: In(ids) })
        .andWhere('("claimedUntil" IS NULL OR "claimedUntil" <= :now)', { now: claim.now })
        .execute();
      // The claimed rows are among `ids`: reading them by primary key needs no index on the claim.
      return m.find(OutboxMail, {
        where: { id: In(ids), claimedBy: claim.id },
        order: { nextAttemptAt: 'ASC', id: 'ASC' },
      });
    });
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
