import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { digestOpaqueToken } from '../common/crypto/opaque-token.js';
import { NotFoundError, UnauthorizedError } from '../common/errors/domain-errors.js';
import { normalizeEmail } from '../common/identity/email.js';
import { RandomSource } from '../common/random/random-source.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig, type EmailCodeConfig } from '../config/app-config.js';
import { FailedLogins } from '../passwords/failed-logins.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { EmailCodeFailureReason } from '../events/auth-event.js';
import { AuthEvents } from '../events/auth-events.js';
import { forRequest } from '../logging/log-fields.js';
import { MailOutbox } from '../mail/mail-outbox.js';
import type { PreparedMail } from '../mail/mail-sender.js';
import { MfaMessages } from '../two-factor/mfa.messages.js';
import { TotpFactors } from '../two-factor/totp-factors.service.js';
import { EMAIL_CODE_AND_OTP, EMAIL_CODE_ONLY, type AuthMethod } from '../tokens/auth-methods.js';
import type { StartedLogin } from '../tokens/started-login.js';
import type { AuthResponseDto } from '../tokens/dto/auth-response.dto.js';
import type { MessageResponseDto } from '../tokens/dto/message-response.dto.js';
import { TokensService } from '../tokens/tokens.service.js';
import type { User } from '../users/entities/user.entity.js';
import { UsersService } from '../users/users.service.js';
import type { EmailCodeLoginDto } from './dto/email-code-login.dto.js';
import type { SendEmailCodeDto } from './dto/send-email-code.dto.js';
import { EmailCodeRepository } from './email-code.repository.js';
import { EmailCodeSecrets } from './email-code-secrets.js';
import { EmailCodesMessages } from './email-codes.messages.js';
import { EmailCode } from './entities/email-code.entity.js';

const MINUTE_MS = 60_000;

/** What a sign-in presents: the address and the mailed code, or the link's token (its digest). */
type Presented =
  | { readonly kind: 'code'; readonly email: string; readonly code: string }
  | { readonly kind: 'link'; readonly tokenHash: string };

/** The refusal of an attempt, once its event is on its way. */
type Refuse = (userId: string | null, reason: EmailCodeFailureReason, message?: string) => Error;

/** Rolls a transaction back: the code's row changed since it was read (another attempt won). */
class CodeChanged extends Error {}

/**
 * Sign-in with a code mailed to the account's address (issue 27, decision 0046). Asking costs the
 * same whatever the address: the request is queued as it is, and the sender decides off the
 * request path whether an account has the address (see prepare), as for a forgotten password.
 * A code is single use, expires after EmailCode__LifetimeMinutes, and dies at its
 * EmailCode__MaxAttempts-th wrong try; a wrong code also counts as a failed login (SPEC §3.1's
 * lockout), so a new code buys an attacker no new guesses. The mail's link carries a separate
 * 256-bit token that signs in the same way, with no tries to count.
 */
@Injectable()
export class EmailCodesService implements OnModuleInit {
  private readonly logger = new Logger(EmailCodesService.name);
  private readonly settings: EmailCodeConfig;
  private readonly minIntervalMs: number;

  constructor(
    private readonly usersService: UsersService,
    private readonly tokensService: TokensService,
    private readonly totpFactors: TotpFactors,
    private readonly failedLogins: FailedLogins,
    private readonly mail: MailOutbox,
    private readonly repository: EmailCodeRepository,
    private readonly secrets: EmailCodeSecrets,
    private readonly unitOfWork: UnitOfWork,
    private readonly clock: Clock,
    private readonly random: RandomSource,
    private readonly events: AuthEvents,
    config: AppConfig,
  ) {
    this.settings = config.emailCode;
    this.minIntervalMs = config.mail.minIntervalSeconds * 1000;
  }

  onModuleInit(): void {
    this.mail.registerPreparer('email_code', (m, recipient, origin) =>
      this.prepare(m, recipient, origin),
    );
  }

  /** The same answer, and the same work (one insert), for every address. */
  async send(request: SendEmailCodeDto, origin: RequestOrigin): Promise<MessageResponseDto> {
    this.assertEnabled();
    await this.mail.request('email_code', normalizeEmail(request.email), origin);
    return { message: EmailCodesMessages.codeRequested };
  }

  /**
   * Login's order (SPEC §4.2): no account, deactivated, locked out; then the code, then the
   * second factor of an account that has one. Every refusal of the code itself has one text.
   */
  async login(request: EmailCodeLoginDto, origin: RequestOrigin): Promise<AuthResponseDto> {
    return (await this.signIn(request, origin)).response;
  }

  /**
   * The sign-in of `login` with every rule of it, for a sign-in that is not an API call (the
   * OpenID provider's hosted page): it also says which session it started and how.
   */
  async signIn(request: EmailCodeLoginDto, origin: RequestOrigin): Promise<StartedLogin> {
    this.assertEnabled();
    // Refusals decided where nothing is written; a counted wrong code's is written with its count.
    const refusals = this.events.pending();
    const refuse: Refuse = (userId, reason, message = EmailCodesMessages.invalidCode) => {
      refusals.record({ type: 'email_code_login_failed', userId, reason }, origin);
      return new UnauthorizedError(message);
    };
    return await refusals.settle(
      this.attempt(presentedOf(request), request.secondFactorCode ?? null, origin, refuse),
    );
  }

  /**
   * Decides on the account and code as read, and writes only if they are still so; when another
   * attempt wrote first, both are read again and the checks re-run, so every outcome is one that
   * some one-at-a-time order of the attempts would give (at most EmailCode__MaxAttempts wrong
   * tries per code, on any number of instances). The second factor's verdict is kept across
   * re-reads: its code was used up when it was checked.
   */
  private async attempt(
    presented: Presented,
    secondFactorCode: string | null,
    origin: RequestOrigin,
    refuse: Refuse,
  ): Promise<StartedLogin> {
    let methods: readonly AuthMethod[] | 'bad_mfa_code' | 'unchecked' = 'unchecked';
    for (;;) {
      const { user, code } = await this.candidate(presented, refuse);
      const refusal = this.failedLogins.refusalFor(user);
      if (refusal !== null) {
        throw refuse(user.id, refusal.reason, refusal.message);
      }
      // A code mailed to an address the account no longer has is dead.
      if (code === null || code.email !== user.email) {
        throw refuse(user.id, 'invalid');
      }
      if (code.expiresAt.getTime() <= this.clock.now().getTime()) {
        throw refuse(user.id, 'expired');
      }
      if (
        presented.kind === 'code' &&
        !this.secrets.matches(code.id, code.codeHash, presented.code)
      ) {
        if (await this.countWrongTry(user, code, origin)) {
          throw new UnauthorizedError(EmailCodesMessages.invalidCode);
        }
        continue;
      }
      if (methods === 'unchecked') {
        // Most accounts have no second factor: the session starts on the condition that there is
        // none, and only when there is one is it read and its code checked (as login does).
        const started = await this.start(user, code, EMAIL_CODE_ONLY, origin, true);
        if (started === 'changed') {
          continue;
        }
        if (started !== 'refused') {
          return started;
        }
        methods = await this.secondFactor(user, secondFactorCode, origin, refuse);
      }
      if (methods === 'bad_mfa_code') {
        const failure = {
          type: 'email_code_login_failed',
          userId: user.id,
          reason: 'bad_mfa_code',
        } as const;
        if (await this.failedLogins.record(user, origin, failure)) {
          throw new UnauthorizedError(MfaMessages.invalidCode);
        }
        continue;
      }
      const started = await this.start(user, code, methods, origin, false);
      if (started !== 'changed' && started !== 'refused') {
        return started;
      }
    }
  }

  /** The account the attempt names, and its live code (null when it has none). */
  private async candidate(
    presented: Presented,
    refuse: Refuse,
  ): Promise<{ readonly user: User; readonly code: EmailCode | null }> {
    if (presented.kind === 'code') {
      const user = await this.usersService.findByEmail(presented.email);
      if (user === null) {
        throw refuse(null, 'invalid');
      }
      return { user, code: await this.repository.findOf(user.id) };
    }
    const code = await this.repository.findByTokenHash(presented.tokenHash);
    const user = code === null ? null : await this.usersService.findById(code.userId);
    if (user === null) {
      throw refuse(null, 'invalid');
    }
    return { user, code };
  }

  /**
   * Counts a wrong code on the code and, as a failed login, on the account (the fifth starts a
   * lockout), in one transaction with its event. False when the account or the code changed since
   * they were read: nothing was written, read them again.
   */
  private async countWrongTry(
    user: User,
    code: EmailCode,
    origin: RequestOrigin,
  ): Promise<boolean> {
    const { maxAttempts } = this.settings;
    const reason = code.attempts + 1 >= maxAttempts ? 'exhausted' : 'bad_code';
    const failure = { type: 'email_code_login_failed', userId: user.id, reason } as const;
    try {
      return await this.failedLogins.record(user, origin, failure, async (m) => {
        if (!(await this.repository.countWrongTry(m, code, maxAttempts))) {
          throw new CodeChanged();
        }
      });
    } catch (error: unknown) {
      if (error instanceof CodeChanged) {
        return false;
      }
      throw error;
    }
  }

  /**
   * How the session is authenticated once the account has a confirmed second factor, or
   * `bad_mfa_code`. Without its code: refused, and no counter moves (the mailed code stays).
   */
  private async secondFactor(
    user: User,
    code: string | null,
    origin: RequestOrigin,
    refuse: Refuse,
  ): Promise<readonly AuthMethod[] | 'bad_mfa_code'> {
    const factor = await this.totpFactors.activeFactorOf(user.id);
    if (factor === null) {
      return EMAIL_CODE_ONLY;
    }
    if (code === null) {
      throw refuse(user.id, 'mfa_required', MfaMessages.codeRequired);
    }
    return (await this.totpFactors.redeem(factor, code, origin)) === null
      ? 'bad_mfa_code'
      : EMAIL_CODE_AND_OTP;
  }

  /**
   * Uses the code up and starts the session, with a successful login's bookkeeping (counter and
   * lockout cleared, lastLoginAt), all or nothing. The code reached the address, so an unverified
   * address is verified by it, as a password reset's link verifies it. `changed`: the account or
   * the code changed since they were read; `refused`: `withoutFactor` and the account has one.
   */
  private async start(
    user: User,
    code: EmailCode,
    methods: readonly AuthMethod[],
    origin: RequestOrigin,
    withoutFactor: boolean,
  ): Promise<StartedLogin | 'changed' | 'refused'> {
    const now = this.clock.now();
    const verifies = user.emailVerifiedAt === null;
    const account: User = verifies ? { ...user, emailVerifiedAt: now } : user;
    try {
      const started = await this.tokensService.start(account, origin, {
        account: this.usersService.loginStateWrite(user.id, user, {
          failedLoginAttempts: 0,
          lockoutEnd: null,
          lastLoginAt: now,
          passwordHash: user.passwordHash,
        }),
        authMethods: methods,
        requires: withoutFactor ? this.totpFactors.noConfirmedFactor(user.id) : undefined,
        event: (familyId) => ({ type: 'email_code_login_succeeded', userId: user.id, familyId }),
        alongside: (m) => this.useUp(m, code, verifies, origin, now),
      });
      if (started === 'changed' || started === 'refused') {
        return started;
      }
      this.logger.log(`User ${user.id} signed in with a mailed code`, forRequest(origin.requestId));
      return { response: started.response, sessionId: started.familyId, authMethods: methods };
    } catch (error: unknown) {
      if (error instanceof CodeChanged) {
        return 'changed';
      }
      throw error;
    }
  }

  private async useUp(
    m: EntityManager,
    code: EmailCode,
    verifies: boolean,
    origin: RequestOrigin,
    now: Date,
  ): Promise<void> {
    if (!(await this.repository.consume(m, code))) {
      throw new CodeChanged();
    }
    if (verifies) {
      if (!(await this.usersService.markEmailVerified(code.userId, code.email, now, m))) {
        throw new CodeChanged();
      }
      await this.events.record(m, { type: 'email_verified', userId: code.userId }, origin);
    }
  }

  /**
   * The sender's half of a request: no mail for an address without an account or for a
   * deactivated account (its sign-in would be refused), none inside Mail__MinIntervalSeconds of
   * the account's live code (which stays), and otherwise a new code that replaces the live one
   * and withdraws its mail if still unsent.
   */
  private async prepare(
    m: EntityManager,
    recipient: string,
    origin: RequestOrigin,
  ): Promise<PreparedMail | null> {
    // Asked for while the feature was on, prepared after a restart with it off: nothing is sent.
    if (!this.settings.enabled) {
      return null;
    }
    const user = await this.usersService.findByEmail(recipient, m);
    if (user === null || !user.isActive) {
      return null;
    }
    // Two requests for one account take turns, so one of them sees the other's code.
    await this.unitOfWork.lock(m, `email-code:${user.id}`);
    const now = this.clock.now();
    const previous = await this.repository.findOf(user.id, m);
    if (
      previous !== null &&
      previous.email === user.email &&
      now.getTime() - previous.createdAt.getTime() < this.minIntervalMs
    ) {
      return null;
    }
    const id = this.random.uuid();
    const secrets = this.secrets.create(id);
    await this.mail.cancelOpen(m, user.id, ['email_code']);
    await this.repository.replace(
      m,
      Object.assign(new EmailCode(), {
        id,
        userId: user.id,
        email: user.email,
        codeHash: secrets.codeHash,
        tokenHash: secrets.tokenHash,
        attempts: 0,
        createdAt: now,
        expiresAt: new Date(now.getTime() + this.settings.lifetimeMinutes * MINUTE_MS),
      }),
    );
    await this.events.record(m, { type: 'email_code_requested', userId: user.id }, origin);
    return {
      userId: user.id,
      recipient: user.email,
      values: { username: user.username, expiresInMinutes: this.settings.lifetimeMinutes },
      token: secrets.token,
      code: secrets.code,
    };
  }

  /** Off, the routes answer 404 (docs/behaviour.md, Sign-in with a mailed code). */
  private assertEnabled(): void {
    if (!this.settings.enabled) {
      throw new NotFoundError(EmailCodesMessages.disabled);
    }
  }
}

function presentedOf(request: EmailCodeLoginDto): Presented {
  if (request.token !== undefined && request.token !== null) {
    return { kind: 'link', tokenHash: digestOpaqueToken(request.token) };
  }
  // The DTO requires both when there is no token.
  return { kind: 'code', email: normalizeEmail(request.email ?? ''), code: request.code ?? '' };
}
