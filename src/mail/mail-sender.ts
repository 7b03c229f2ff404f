import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { internalOrigin, type RequestOrigin } from '../common/request-origin/request-origin.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/app-config.js';
import { TOKEN_PLACEHOLDER, type MailConfig } from '../config/settings/mail-settings.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { AuthEvents } from '../events/auth-events.js';
import { OutboxMail, type MailKind } from './entities/outbox-mail.entity.js';
import { MailTemplates, type TemplateValues } from './mail-templates.js';
import { createMailTransport, DeliveryError, type MailTransport } from './mail-transport.js';
import { OutboxMailRepository } from './outbox-mail.repository.js';
import { OutboxSecrets } from './outbox-secrets.js';
import { RandomSource } from '../common/random/random-source.js';
import { DeliveryLoop, retryDelayMs } from '../outbox/delivery-loop.js';

/** What a preparer makes of a requested mail: its account, address, values and token. */
export interface PreparedMail {
  readonly userId: string;
  readonly recipient: string;
  readonly values: TemplateValues;
  readonly token?: string;
  /** A one-time code the mail shows beside its link (`{{code}}`); sealed with the token. */
  readonly code?: string;
}

/**
 * Decides, inside the sender's transaction, what a requested mail becomes: null to send nothing
 * (no such account, or too soon), or the mail, whose token it writes in that same transaction.
 */
export type MailPreparer = (
  manager: EntityManager,
  recipient: string,
  origin: RequestOrigin,
) => Promise<PreparedMail | null>;

/** Mails claimed, and sent side by side, per round: all within one attempt's deadline. */
const CLAIM_BATCH = 5;
const FIRST_RETRY_MS = 30_000;
const LONGEST_RETRY_MS = 60 * 60_000;
const PURGE_EVERY_MS = 10 * 60_000;
const DAY_MS = 24 * 60 * 60_000;

/** Which link template each kind's `{{link}}` is made from. */
const LINKS: Readonly<Record<MailKind, keyof MailConfig['links'] | null>> = {
  password_reset: 'resetPassword',
  email_verification: 'verifyEmail',
  email_change: 'verifyEmail',
  email_changed: null,
  email_code: 'emailCode',
};

/**
 * A mail's code is sealed together with its link's token, `<token> <code>`: tokens are base64url
 * and codes digits, so neither holds the space.
 */
const CODE_SEPARATOR = ' ';

/**
 * Delivers the mail of the outbox on its one delivery loop (DeliveryLoop, decision 0050), off
 * every request path: at start-up, every Mail__PollIntervalSeconds, and at once when a request
 * queued a mail. Each mail is claimed before it is sent (a claim lasts two attempt deadlines, and
 * the attempt is aborted at one), so of several instances one sends it.
 * A failed attempt is retried with a doubling delay, up to Mail__MaxAttempts; a permanent SMTP
 * refusal (5xx) is final at once. Every attempt of a mail sends the same message, Message-ID
 * included: when a process dies between the server's acceptance and the row's update, the mail
 * is sent again, identically (docs/operations/mail.md, Delivery guarantee).
 */
@Injectable()
export class MailSender implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MailSender.name);
  private readonly settings: MailConfig;
  private readonly transport: MailTransport | null;
  private readonly preparers = new Map<MailKind, MailPreparer>();
  private readonly loop: DeliveryLoop<OutboxMail> | null;
  private lastPurge = 0;

  constructor(
    private readonly repository: OutboxMailRepository,
    private readonly unitOfWork: UnitOfWork,
    private readonly templates: MailTemplates,
    private readonly secrets: OutboxSecrets,
    private readonly events: AuthEvents,
    private readonly clock: Clock,
    private readonly random: RandomSource,
    config: AppConfig,
  ) {
    this.settings = config.mail;
    const transport = createMailTransport(config.mail.transport, this.attemptTimeoutMs);
    this.transport = transport;
    this.loop =
      transport === null
        ? null
        : new DeliveryLoop(
            {
              claimDue: (claim, limit) => this.repository.claimDue(claim, limit),
              attempt: (mail, signal) => this.deliver(transport, mail, signal),
              afterRound: () => this.purgeNowAndThen(),
            },
            {
              pollIntervalMs: this.settings.pollIntervalSeconds * 1000,
              attemptTimeoutMs: this.attemptTimeoutMs,
              batchSize: CLAIM_BATCH,
            },
            clock,
            random,
            this.logger,
          );
  }

  onApplicationBootstrap(): void {
    if (this.loop === null) {
      this.logger.log('Mail is off: Smtp__Url is not set');
      return;
    }
    this.loop.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.loop?.stop();
    this.transport?.close();
  }

  registerPreparer(kind: MailKind, preparer: MailPreparer): void {
    this.preparers.set(kind, preparer);
  }

  /** Starts a round now, or another one right after the running one. */
  wake(): void {
    this.loop?.wake();
  }

  /** Resolves once no round is running: for tests and the admin CLI. */
  async idle(): Promise<void> {
    await this.loop?.idle();
  }

  private get attemptTimeoutMs(): number {
    return this.settings.sendTimeoutSeconds * 1000;
  }

  private async deliver(
    transport: MailTransport,
    claimed: OutboxMail,
    signal: AbortSignal,
  ): Promise<void> {
    const origin = internalOrigin('mail', this.random);
    const mail = claimed.state === 'requested' ? await this.prepare(claimed) : claimed;
    if (mail === null) {
      return;
    }
    const outgoing = this.compose(mail);
    if (outgoing === null) {
      await this.giveUp(mail, 'ESECRET', origin);
      return;
    }
    try {
      await transport.send(outgoing, signal);
    } catch (error: unknown) {
      const failure = error instanceof DeliveryError ? error : new DeliveryError('EUNKNOWN', false);
      if (failure.isPermanent || mail.attempts >= this.settings.maxAttempts) {
        await this.giveUp(mail, failure.code, origin);
      } else {
        await this.retryLater(mail, failure.code, origin);
      }
      return;
    }
    const recorded = await this.repository.finish(mail, 'sent', this.clock.now(), null, (m) =>
      this.tell(m, 'mail_sent', mail, null, origin),
    );
    if (!recorded) {
      this.logger.warn(`Mail ${mail.id} was sent after its claim had lapsed`);
    }
    this.logger.log(`Mail ${mail.id} (${mail.kind}) sent after ${mail.attempts} attempt(s)`);
  }

  /** A requested mail becomes a pending one, or is dropped, in one transaction with its token. */
  private async prepare(mail: OutboxMail): Promise<OutboxMail | null> {
    const preparer = this.preparers.get(mail.kind);
    if (preparer === undefined) {
      throw new Error(`No preparer for requested ${mail.kind} mail`);
    }
    const { origin } = JSON.parse(mail.params) as { origin: RequestOrigin };
    const prepared = await this.unitOfWork.transaction(async (m) => {
      const made = await preparer(m, mail.recipient, origin);
      if (made === null) {
        await this.repository.drop(m, mail);
        return null;
      }
      const fields = {
        userId: made.userId,
        recipient: made.recipient,
        params: JSON.stringify(made.values),
        secret:
          made.token === undefined
            ? null
            : this.secrets.seal(
                made.code === undefined ? made.token : `${made.token}${CODE_SEPARATOR}${made.code}`,
              ),
      };
      if (!(await this.repository.prepare(m, mail, fields))) {
        throw new Error(`The claim on mail ${mail.id} lapsed while it was prepared`);
      }
      return Object.assign(new OutboxMail(), { ...mail, ...fields, state: 'pending' });
    });
    return prepared;
  }

  /** The message, or null when its token cannot be opened (the secret that sealed it is gone). */
  private compose(mail: OutboxMail) {
    const values = JSON.parse(mail.params) as TemplateValues;
    const linkKey = LINKS[mail.kind];
    let secrets: TemplateValues = {};
    if (linkKey !== null) {
      const sealed = mail.secret === null ? null : this.secrets.open(mail.secret);
      if (sealed === null) {
        return null;
      }
      const [token, code] = sealed.split(CODE_SEPARATOR);
      const link = this.settings.links[linkKey].replaceAll(
        TOKEN_PLACEHOLDER,
        encodeURIComponent(token),
      );
      secrets = code === undefined ? { link } : { link, code };
    }
    const rendered = this.templates.render(mail.kind, { ...values, ...secrets });
    return {
      ...rendered,
      id: mail.id,
      from: this.settings.from,
      to: mail.recipient,
      messageId: `<${mail.id}@${domainOf(this.settings.from)}>`,
      date: mail.createdAt,
    };
  }

  private async retryLater(mail: OutboxMail, code: string, origin: RequestOrigin): Promise<void> {
    const delay = retryDelayMs(mail.attempts, FIRST_RETRY_MS, LONGEST_RETRY_MS);
    await this.repository.retryAt(mail, new Date(this.clock.now().getTime() + delay), code, (m) =>
      this.tell(m, 'mail_retry_scheduled', mail, code, origin),
    );
    this.logger.warn(
      `Mail ${mail.id} (${mail.kind}) not sent (${code}); attempt ${mail.attempts + 1} in ${delay / 1000} s`,
    );
  }

  private async giveUp(mail: OutboxMail, code: string, origin: RequestOrigin): Promise<void> {
    await this.repository.finish(mail, 'failed', this.clock.now(), code, (m) =>
      this.tell(m, 'mail_failed', mail, code, origin),
    );
    this.logger.error(
      `Mail ${mail.id} (${mail.kind}) given up after ${mail.attempts} attempt(s): ${code}`,
    );
  }

  /** Records the attempt's event in the transaction that records its outcome. */
  private tell(
    m: EntityManager,
    type: 'mail_sent' | 'mail_retry_scheduled' | 'mail_failed',
    mail: OutboxMail,
    error: string | null,
    origin: RequestOrigin,
  ): Promise<void> {
    const { userId, id: mailId, kind, attempts } = mail;
    return this.events.record(m, { type, userId, mailId, kind, attempts, error }, origin);
  }

  private async purgeNowAndThen(): Promise<void> {
    const now = this.clock.now().getTime();
    if (now - this.lastPurge < PURGE_EVERY_MS) {
      return;
    }
    this.lastPurge = now;
    const cutoff = new Date(now - this.settings.retentionDays * DAY_MS);
    const deleted = await this.repository.purgeFinishedBefore(cutoff);
    if (deleted > 0) {
      this.logger.log(`Deleted ${deleted} finished mail(s) from the outbox`);
    }
  }
}

/** The domain of the From address, for Message-IDs. */
function domainOf(from: string): string {
  const match = /@([^>\s]+)>?\s*$/.exec(from);
  return match?.[1] ?? 'localhost';
}
