import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { UnavailableError } from '../common/errors/domain-errors.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/app-config.js';
import { OutboxMail, type MailKind } from './entities/outbox-mail.entity.js';
import { MailMessages } from './mail.messages.js';
import { MailSender, type MailPreparer } from './mail-sender.js';
import type { TemplateValues } from './mail-templates.js';
import { OutboxMailRepository } from './outbox-mail.repository.js';
import { OutboxSecrets } from './outbox-secrets.js';
import { RandomSource } from '../common/random/random-source.js';

/** A mail to queue: its kind, its account and address, its template values and its token. */
export interface MailToQueue {
  readonly kind: MailKind;
  readonly userId: string;
  readonly recipient: string;
  readonly values: TemplateValues;
  /** The raw token the mail's link carries; sealed before it is stored. */
  readonly token?: string;
}

/**
 * How other modules send mail: they queue it in their own transaction, next to the change it
 * announces, and tell the sender once that transaction has committed. Nothing is sent on the
 * request path.
 */
@Injectable()
export class MailOutbox {
  constructor(
    private readonly repository: OutboxMailRepository,
    private readonly secrets: OutboxSecrets,
    private readonly sender: MailSender,
    private readonly clock: Clock,
    private readonly random: RandomSource,
    private readonly config: AppConfig,
  ) {}

  /** False in production without Smtp__Url: nothing can be sent. */
  get isEnabled(): boolean {
    return this.config.mail.transport.kind !== 'off';
  }

  /** For the routes that exist to send a mail: a documented 503 when mail is off. */
  assertEnabled(): void {
    if (!this.isEnabled) {
      throw new UnavailableError(MailMessages.unavailable);
    }
  }

  /** Queues a mail inside the caller's transaction. Call wake() once it has committed. */
  async enqueue(manager: EntityManager, mail: MailToQueue): Promise<void> {
    await this.repository.insert(
      manager,
      this.newMail({
        kind: mail.kind,
        state: 'pending',
        userId: mail.userId,
        recipient: mail.recipient,
        params: JSON.stringify(mail.values),
        secret: mail.token === undefined ? null : this.secrets.seal(mail.token),
      }),
    );
  }

  /**
   * Records that a mail of `kind` to `recipient` was asked for, and leaves every decision about
   * it (is there an account, is it too soon) to the kind's preparer, which the sender runs off
   * the request path. The request costs one insert whatever the answer will be.
   */
  async request(kind: MailKind, recipient: string, origin: RequestOrigin): Promise<void> {
    await this.repository.insertAlone(this.requestedMail(kind, recipient, origin));
    this.wake();
  }

  /**
   * request() inside the caller's transaction, for a request that commits with its audit row (an
   * administrator's): call wake() once it has committed.
   */
  async requestWithin(
    manager: EntityManager,
    kind: MailKind,
    recipient: string,
    origin: RequestOrigin,
  ): Promise<void> {
    await this.repository.insert(manager, this.requestedMail(kind, recipient, origin));
  }

  /** A request for the sender to prepare: no account or token is looked at yet. */
  private requestedMail(kind: MailKind, recipient: string, origin: RequestOrigin): OutboxMail {
    return this.newMail({
      kind,
      state: 'requested',
      userId: null,
      recipient,
      params: JSON.stringify({ origin }),
      secret: null,
    });
  }

  /** Deletes the unsent mails of these kinds to an account, inside the caller's transaction. */
  cancelOpen(manager: EntityManager, userId: string, kinds: MailKind[]): Promise<void> {
    return this.repository.cancelOpen(manager, userId, kinds);
  }

  registerPreparer(kind: MailKind, preparer: MailPreparer): void {
    this.sender.registerPreparer(kind, preparer);
  }

  /** Tells the sender there is mail; it looks at once instead of at its next poll. */
  wake(): void {
    this.sender.wake();
  }

  private newMail(
    fields: Pick<OutboxMail, 'kind' | 'state' | 'userId' | 'recipient' | 'params' | 'secret'>,
  ): OutboxMail {
    const now = this.clock.now();
    return Object.assign(new OutboxMail(), {
      id: this.random.uuid(),
      ...fields,
      createdAt: now,
      attempts: 0,
      nextAttemptAt: now,
      claimedBy: null,
      claimedUntil: null,
      finishedAt: null,
      lastError: null,
    });
  }
}
