import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { digestOpaqueToken, generateOpaqueToken } from '../common/crypto/opaque-token.js';
import { InvalidArgumentError, UnauthorizedError } from '../common/errors/domain-errors.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/app-config.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { MailedTokenFailureReason } from '../events/auth-event.js';
import { AuthEvents } from '../events/auth-events.js';
import type { MailKind } from '../mail/entities/outbox-mail.entity.js';
import { MailOutbox } from '../mail/mail-outbox.js';
import type { TemplateValues } from '../mail/mail-templates.js';
import type { User } from '../users/entities/user.entity.js';
import { UsersMessages } from '../users/users.messages.js';
import { UsersService } from '../users/users.service.js';
import { AccountTokenRepository } from './account-token.repository.js';
import { AccountTokensMessages } from './account-tokens.messages.js';
import { AccountToken, type AccountTokenPurpose } from './entities/account-token.entity.js';
import { RandomSource } from '../common/random/random-source.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/** A usable mailed token and the account it is for. */
export interface RedeemableToken {
  readonly token: AccountToken;
  readonly user: User;
}

/**
 * The tokens of mailed links: 256 random bits, stored only as a SHA-256 digest, one live token per
 * account and purpose, written in the transaction that queues the mail carrying them. A new one
 * replaces the previous (whose unsent mail is withdrawn), except inside Mail__MinIntervalSeconds
 * of a token for the same address: then nothing is written and nothing sent.
 */
@Injectable()
export class MailedTokens {
  private readonly minIntervalMs: number;
  private readonly lifetimeMs: Readonly<Record<AccountTokenPurpose, number>>;

  constructor(
    private readonly repository: AccountTokenRepository,
    private readonly usersService: UsersService,
    private readonly events: AuthEvents,
    private readonly mail: MailOutbox,
    private readonly unitOfWork: UnitOfWork,
    private readonly clock: Clock,
    private readonly random: RandomSource,
    config: AppConfig,
  ) {
    this.minIntervalMs = config.mail.minIntervalSeconds * 1000;
    const { passwordResetTokenMinutes, emailVerificationTokenHours } = config.accountFlows;
    this.lifetimeMs = {
      password_reset: passwordResetTokenMinutes * MINUTE_MS,
      email_verification: emailVerificationTokenHours * HOUR_MS,
      email_change: emailVerificationTokenHours * HOUR_MS,
    };
  }

  /** The values every link mail's templates get: the name and how long the link works. */
  valuesFor(user: User, purpose: AccountTokenPurpose): TemplateValues {
    const lifetimeMs = this.lifetimeMs[purpose];
    return {
      username: user.username,
      expiresInMinutes: lifetimeMs / MINUTE_MS,
      expiresInHours: Math.round((lifetimeMs / HOUR_MS) * 10) / 10,
    };
  }

  /**
   * Writes a new token for `address` and returns its raw value, or null when one for the same
   * address was made less than Mail__MinIntervalSeconds ago. Inside the caller's transaction.
   */
  async create(
    manager: EntityManager,
    user: User,
    purpose: AccountTokenPurpose,
    address: string,
  ): Promise<string | null> {
    // Two requests for one account and purpose take turns, so one of them sees the other's token.
    await this.unitOfWork.lock(manager, `account-token:${user.id}:${purpose}`);
    const now = this.clock.now();
    const previous = await this.repository.findOf(manager, user.id, purpose);
    if (
      previous !== null &&
      previous.email === address &&
      now.getTime() - previous.createdAt.getTime() < this.minIntervalMs
    ) {
      return null;
    }
    const { raw, hash } = generateOpaqueToken(this.random);
    await this.mail.cancelOpen(manager, user.id, [mailKindOf(purpose)]);
    await this.repository.replace(
      manager,
      Object.assign(new AccountToken(), {
        id: this.random.uuid(),
        userId: user.id,
        purpose,
        tokenHash: hash,
        email: address,
        createdAt: now,
        expiresAt: new Date(now.getTime() + this.lifetimeMs[purpose]),
      }),
    );
    return raw;
  }

  /** create(), and the mail that carries the token; false when it was too soon. */
  async send(
    manager: EntityManager,
    user: User,
    purpose: AccountTokenPurpose,
    address: string,
    extra: TemplateValues = {},
  ): Promise<boolean> {
    const token = await this.create(manager, user, purpose, address);
    if (token === null) {
      return false;
    }
    await this.mail.enqueue(manager, {
      kind: mailKindOf(purpose),
      userId: user.id,
      recipient: address,
      values: { ...this.valuesFor(user, purpose), ...extra },
      token,
    });
    return true;
  }

  /**
   * The token with this raw value among `purposes`, and its account, if the link still works.
   * Otherwise the failure is told (`failure` event) and thrown, with one text for every case:
   * unknown, used, replaced, expired, or mailed to an address the account no longer has (an
   * e-mail change token names the new address, so it cannot be). A deactivated account is
   * refused as on every route.
   */
  async redeemable(
    raw: string,
    purposes: readonly AccountTokenPurpose[],
    failure: 'password_reset_failed' | 'email_verification_failed',
    origin: RequestOrigin,
  ): Promise<RedeemableToken> {
    // Nothing else is written for a refusal: its event is a unit of its own.
    const refuse = async (userId: string | null, reason: MailedTokenFailureReason) => {
      await this.events.recordAlone({ type: failure, userId, reason }, origin);
      return new InvalidArgumentError(AccountTokensMessages.mailedTokenInvalid);
    };
    const token = await this.repository.findByHash(digestOpaqueToken(raw));
    if (token === null || !purposes.includes(token.purpose)) {
      throw await refuse(null, 'invalid');
    }
    if (token.expiresAt.getTime() <= this.clock.now().getTime()) {
      throw await refuse(token.userId, 'expired');
    }
    const user = await this.usersService.findById(token.userId);
    if (user === null || (token.purpose !== 'email_change' && user.email !== token.email)) {
      throw await refuse(null, 'invalid');
    }
    if (!user.isActive) {
      throw new UnauthorizedError(UsersMessages.deactivated);
    }
    return { token, user };
  }

  /** The error of a token that another request used first (see consume), once its event committed. */
  async usedMeanwhile(
    failure: 'password_reset_failed' | 'email_verification_failed',
    origin: RequestOrigin,
  ): Promise<Error> {
    await this.events.recordAlone({ type: failure, userId: null, reason: 'invalid' }, origin);
    return new InvalidArgumentError(AccountTokensMessages.mailedTokenInvalid);
  }

  /** Uses the token up, inside the caller's transaction; false when another request did first. */
  consume(manager: EntityManager, token: AccountToken): Promise<boolean> {
    return this.repository.consume(manager, token);
  }

  /** Deletes the account's tokens of these purposes: an address or a password they relied on changed. */
  revokeOf(
    manager: EntityManager,
    userId: string,
    purposes: readonly AccountTokenPurpose[],
  ): Promise<void> {
    return this.repository.deleteOf(manager, userId, purposes);
  }
}

/** Each purpose has the mail of the same name. */
function mailKindOf(purpose: AccountTokenPurpose): MailKind {
  return purpose;
}
