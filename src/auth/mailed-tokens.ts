import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { digestOpaqueToken, generateOpaqueToken } from '../common/crypto/opaque-token.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/app-config.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { MailKind } from '../mail/entities/outbox-mail.entity.js';
import { MailOutbox } from '../mail/mail-outbox.js';
import type { TemplateValues } from '../mail/mail-templates.js';
import type { User } from '../users/entities/user.entity.js';
import { AccountTokenRepository } from './account-token.repository.js';
import { AccountToken, type AccountTokenPurpose } from './entities/account-token.entity.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/** A mailed token as its redeemer finds it. */
export type FoundToken =
  | { readonly status: 'valid'; readonly token: AccountToken }
  | { readonly status: 'expired'; readonly token: AccountToken }
  | { readonly status: 'invalid' };

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
    private readonly mail: MailOutbox,
    private readonly unitOfWork: UnitOfWork,
    private readonly clock: Clock,
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
    const { raw, hash } = generateOpaqueToken();
    await this.mail.cancelOpen(manager, user.id, [mailKindOf(purpose)]);
    await this.repository.replace(
      manager,
      Object.assign(new AccountToken(), {
        id: randomUUID(),
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

  /** The token with this raw value among `purposes`, and whether it still works. */
  async find(raw: string, purposes: readonly AccountTokenPurpose[]): Promise<FoundToken> {
    const token = await this.repository.findByHash(digestOpaqueToken(raw));
    if (token === null || !purposes.includes(token.purpose)) {
      return { status: 'invalid' };
    }
    const expired = token.expiresAt.getTime() <= this.clock.now().getTime();
    return { status: expired ? 'expired' : 'valid', token };
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
