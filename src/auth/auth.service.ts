import { Injectable, Logger } from '@nestjs/common';
import { ConflictError, UnauthorizedError } from '../common/errors/domain-errors.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/app-config.js';
import type { AuthEvent, LoginFailureReason } from '../events/auth-event.js';
import { AuthEvents } from '../events/auth-events.js';
import { forRequest } from '../logging/log-fields.js';
import { MfaMessages } from '../two-factor/mfa.messages.js';
import { TotpFactors } from '../two-factor/totp-factors.service.js';
import { PasskeyRefusal } from '../passkeys/passkeys.service.js';
import { SecondFactorCheck } from '../two-factor/second-factor-check.js';
import { PASSWORD_ONLY, type AuthMethod } from '../tokens/auth-methods.js';
import type { AuthResponseDto } from '../tokens/dto/auth-response.dto.js';
import type { StartedLogin } from '../tokens/started-login.js';
import { TokensService, type SessionStart } from '../tokens/tokens.service.js';
import { normalizeEmail } from '../common/identity/email.js';
import type { User } from '../users/entities/user.entity.js';
import { UsersMessages } from '../users/users.messages.js';
import { UsersService } from '../users/users.service.js';
import { AccountLock } from '../passwords/account-lock.js';
import { PasswordsMessages } from '../passwords/passwords.messages.js';
import type { LoginDto } from './dto/login.dto.js';
import type { RegisterDto } from './dto/register.dto.js';
import { EmailVerificationService } from '../account/email-verification.service.js';
import { FailedLogins } from '../passwords/failed-logins.js';
import { PasswordHasher } from '../passwords/password-hasher.js';
import { RandomSource } from '../common/random/random-source.js';

/** Registration and login: the rules of SPEC §3.1 and §4.2. */
@Injectable()
export class AuthService {
  private readonly logger = new Logger(AuthService.name);
  private readonly requireVerifiedEmail: boolean;

  constructor(
    private readonly usersService: UsersService,
    private readonly tokensService: TokensService,
    private readonly passwordHasher: PasswordHasher,
    private readonly accountLock: AccountLock,
    private readonly failedLogins: FailedLogins,
    private readonly clock: Clock,
    private readonly random: RandomSource,
    private readonly events: AuthEvents,
    private readonly emailVerification: EmailVerificationService,
    private readonly totpFactors: TotpFactors,
    config: AppConfig,
    private readonly secondFactors: SecondFactorCheck,
  ) {
    this.requireVerifiedEmail = config.accountFlows.requireVerifiedEmail;
  }

  async register(request: RegisterDto, origin: RequestOrigin): Promise<AuthResponseDto> {
    const email = normalizeEmail(request.email);
    // Checked before hashing so a taken e-mail costs no PBKDF2; the unique index still decides
    // between two registrations that pass this check together.
    if ((await this.usersService.findByEmail(email)) !== null) {
      throw new ConflictError(UsersMessages.emailTaken);
    }
    const user: User = {
      id: this.random.uuid(),
      username: request.username,
      email,
      passwordHash: await this.passwordHasher.hash(request.password),
      failedLoginAttempts: 0,
      lockoutEnd: null,
      isActive: true,
      createdAt: this.clock.now(),
      lastLoginAt: null,
      emailVerifiedAt: null,
    };
    // One statement on PostgreSQL (decision 0034): the account, its session and first token, and
    // the `registered` row; the verification mail, when mail is on, makes it a transaction.
    let verificationQueued = false;
    const started = await this.tokensService.start(user, origin, {
      account: this.usersService.insertWrite(user),
      authMethods: PASSWORD_ONLY,
      event: (familyId) => ({ type: 'registered', userId: user.id, familyId }),
      alongside: this.emailVerification.sendsOnRegistration
        ? async (m) => {
            verificationQueued = await this.emailVerification.sendOnRegistration(m, user, origin);
          }
        : undefined,
    });
    if (started === 'changed' || started === 'refused') {
      throw new Error('A new account was not written');
    }
    const { response } = started;
    if (verificationQueued) {
      this.emailVerification.registrationMailQueued();
    }
    this.logger.log(`User ${user.id} registered`, forRequest(origin.requestId));
    return response;
  }

  /**
   * Spec §4.2: unknown e-mail, deactivated, locked out, then the password, in that order; then,
   * for an account with a second factor (beyond the interface), its code. A right password
   * without a code is refused and changes no counter; a wrong or replayed code counts as a
   * failed login exactly as a wrong password does.
   *
   * Attempts on one account take turns inside this process (AccountLock), so a burst cannot have
   * many guesses checked against one counter. Across instances, the verdict is written only if
   * the account's lockout state is still the one it was checked against; otherwise the account
   * is read again and the checks re-run. The password verdict itself stays valid, so PBKDF2 runs
   * once per attempt and no database connection is held while it runs.
   */
  async login(request: LoginDto, origin: RequestOrigin): Promise<AuthResponseDto> {
    return (await this.signIn(request, origin)).response;
  }

  /**
   * The login of SPEC §4.2 with every rule of `login`, for a sign-in that is not an API call
   * (the OpenID provider's hosted page): it also says which session it started and how.
   */
  signIn(request: LoginDto, origin: RequestOrigin): Promise<StartedLogin> {
    const email = normalizeEmail(request.email);
    // Refusals decided where nothing is written; a wrong password's is recorded with its count.
    const refusals = this.events.pending();
    const refuse = (userId: string | null, reason: LoginFailureReason, message: string) => {
      refusals.record({ type: 'login_failed', userId, email, reason }, origin);
      return new UnauthorizedError(message);
    };
    return refusals.settle(
      this.accountLock.run(email, async () => {
        const user = await this.usersService.findByEmail(email);
        if (user === null) {
          await this.passwordHasher.verifyAgainstDummy(request.password);
          throw refuse(null, 'unknown_email', PasswordsMessages.invalidCredentials);
        }
        this.assertMayLogIn(user, refuse);
        const isCorrect = await this.passwordHasher.verify(request.password, user.passwordHash);
        // Opt-in, and only once the password is known to be right, so it tells no one else
        // whether the account exists. A new link is mailed: the account cannot reach resend.
        if (isCorrect && this.requireVerifiedEmail && user.emailVerifiedAt === null) {
          await this.emailVerification.remind(user, origin);
          throw refuse(user.id, 'unverified', UsersMessages.emailNotVerified);
        }
        // A right password starts the session in one statement that requires the account to
        // have no confirmed second factor (decision 0034); only when it has one is the factor
        // read and the code checked, and the session started after that.
        let verdict: readonly AuthMethod[] | 'bad_mfa_code' | PasskeyRefusal | 'unchecked' | null =
          isCorrect ? 'unchecked' : null;
        return this.usersService.retryOnLoginStateChange(
          user,
          async (current) => {
            if (verdict === 'unchecked') {
              const started = await this.recordSuccess(current, request.password, origin, {
                authMethods: PASSWORD_ONLY,
                requires: this.totpFactors.noConfirmedFactor(current.id),
              });
              if (started !== 'refused') {
                return started;
              }
              verdict = await this.secondFactor(current, request, origin, refuse);
            }
            if (
              verdict !== null &&
              verdict !== 'bad_mfa_code' &&
              !(verdict instanceof PasskeyRefusal)
            ) {
              const started = await this.recordSuccess(current, request.password, origin, {
                authMethods: verdict,
              });
              return started === 'refused' ? null : started;
            }
            const reason = verdict === null ? 'bad_password' : 'bad_mfa_code';
            const failure: AuthEvent = { type: 'login_failed', userId: current.id, email, reason };
            if (await this.failedLogins.record(current, origin, failure)) {
              throw new UnauthorizedError(
                verdict === null
                  ? PasswordsMessages.invalidCredentials
                  : verdict instanceof PasskeyRefusal
                    ? verdict.message
                    : MfaMessages.invalidCode,
              );
            }
            return null;
          },
          {
            whenGone: () => refuse(null, 'unknown_email', PasswordsMessages.invalidCredentials),
            onReread: (current) => this.assertMayLogIn(current, refuse),
          },
        );
      }),
    );
  }

  /**
   * After a right password: how the session is authenticated, or `bad_mfa_code`. An account
   * without a confirmed factor needs no code and any code sent is ignored, so it answers as the
   * interface says. The proof (a code, or when passkeys are on a passkey's assertion in place of
   * it) is SecondFactorCheck's; a refused passkey counts as a wrong code does, answered with its
   * own message.
   */
  private async secondFactor(
    user: User,
    { code, passkey }: Pick<LoginDto, 'code' | 'passkey'>,
    origin: RequestOrigin,
    refuse: (userId: string, reason: LoginFailureReason, message: string) => Error,
  ): Promise<readonly AuthMethod[] | 'bad_mfa_code' | PasskeyRefusal> {
    const verdict = await this.secondFactors.check(user.id, { code, passkey }, origin);
    if (verdict === 'none') {
      return PASSWORD_ONLY;
    }
    if (verdict === 'required') {
      // Not a failed login (the password was right) and not a success: no counter moves.
      throw refuse(user.id, 'mfa_required', MfaMessages.codeRequired);
    }
    if (verdict === 'bad_code') {
      return 'bad_mfa_code';
    }
    return verdict instanceof PasskeyRefusal ? verdict : [...PASSWORD_ONLY, ...verdict];
  }

  private assertMayLogIn(
    user: User,
    refuse: (userId: string, reason: LoginFailureReason, message: string) => Error,
  ): void {
    const refusal = this.failedLogins.refusalFor(user);
    if (refusal !== null) {
      throw refuse(user.id, refusal.reason, refusal.message);
    }
  }

  /**
   * Null when the account changed since it was read; `refused` when `start.requires` did not
   * hold (nothing written).
   */
  private async recordSuccess(
    user: User,
    password: string,
    origin: RequestOrigin,
    start: Pick<SessionStart, 'authMethods' | 'requires'>,
  ): Promise<StartedLogin | null | 'refused'> {
    // Hashes made with a lower cost than the configured one are upgraded while we hold the
    // plain password; hashing happens before the statement, never inside a transaction.
    const passwordHash = this.passwordHasher.needsRehash(user.passwordHash)
      ? await this.passwordHasher.hash(password)
      : user.passwordHash;
    const now = this.clock.now();
    // One statement on PostgreSQL (decision 0034): the bookkeeping, if the account is as it was
    // read, the session and its first token, and the `login_succeeded` row.
    const session = await this.tokensService.start(user, origin, {
      ...start,
      account: this.usersService.loginStateWrite(user.id, user, {
        failedLoginAttempts: 0,
        lockoutEnd: null,
        lastLoginAt: now,
        passwordHash,
      }),
      event: (familyId) => ({ type: 'login_succeeded', userId: user.id, familyId }),
    });
    if (session === 'refused') {
      return session;
    }
    if (session === 'changed') {
      return null;
    }
    this.logger.log(`User ${user.id} logged in`, forRequest(origin.requestId));
    return {
      response: session.response,
      sessionId: session.familyId,
      authMethods: start.authMethods,
    };
  }
}
