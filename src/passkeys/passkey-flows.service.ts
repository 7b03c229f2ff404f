import { Injectable, Logger } from '@nestjs/common';
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/server';
import { PasswordConfirmation } from '../passwords/password-confirmation.js';
import {
  InvalidArgumentError,
  NotFoundError,
  UnauthorizedError,
} from '../common/errors/domain-errors.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/app-config.js';
import type { PasskeyFailureReason } from '../events/auth-event.js';
import { AuthEvents } from '../events/auth-events.js';
import { forRequest } from '../logging/log-fields.js';
import type { StartedLogin } from '../tokens/started-login.js';
import type { AuthResponseDto } from '../tokens/dto/auth-response.dto.js';
import { TokensService } from '../tokens/tokens.service.js';
import type { User } from '../users/entities/user.entity.js';
import { UsersMessages } from '../users/users.messages.js';
import { UsersService } from '../users/users.service.js';
import type { PasskeyLoginDto } from './dto/passkey-login.dto.js';
import type { PasskeyRegistrationOptionsDto } from './dto/passkey-registration-options.dto.js';
import { PasskeyListResponseDto, PasskeyResponseDto } from './dto/passkey-response.dto.js';
import type { RegisterPasskeyDto } from './dto/register-passkey.dto.js';
import { PasskeyRefusal, Passkeys } from './passkeys.service.js';
import { PasskeysMessages } from './passkeys.messages.js';

/**
 * The passkey routes (beyond the interface): adding one after a recent proof, listing, renaming
 * and removing them, and signing in with one alone. Decisions in docs/behaviour.md (Passkeys).
 */
@Injectable()
export class PasskeyFlowsService {
  private readonly logger = new Logger(PasskeyFlowsService.name);
  private readonly requireVerifiedEmail: boolean;

  constructor(
    private readonly passkeys: Passkeys,
    private readonly confirmation: PasswordConfirmation,
    private readonly usersService: UsersService,
    private readonly tokensService: TokensService,
    private readonly events: AuthEvents,
    private readonly clock: Clock,
    config: AppConfig,
  ) {
    this.requireVerifiedEmail = config.accountFlows.requireVerifiedEmail;
  }

  /**
   * Creation options, for a recent proof: the password (checked, and counted when wrong, as
   * every route that asks for it again), or an assertion of one of the account's passkeys.
   */
  async registrationOptions(
    userId: string,
    request: PasskeyRegistrationOptionsDto,
    origin: RequestOrigin,
  ): Promise<PublicKeyCredentialCreationOptionsJSON> {
    this.passkeys.assertEnabled();
    const password = request.password ?? null;
    const passkey = request.passkey ?? null;
    if (password !== null && passkey !== null) {
      throw new InvalidArgumentError(PasskeysMessages.proofAmbiguous);
    }
    let user: User;
    if (password !== null) {
      user = await this.confirmation.confirm(userId, password, 'passkey_registration', origin);
    } else if (passkey !== null) {
      const verified = await this.passkeys.verifyAssertion(
        passkey,
        { ceremony: 'proof', userId },
        origin,
      );
      if (verified instanceof PasskeyRefusal) {
        throw new UnauthorizedError(verified.message);
      }
      user = await this.find(userId);
    } else {
      throw new InvalidArgumentError(PasskeysMessages.proofRequired);
    }
    return this.passkeys.registrationOptions(user);
  }

  async register(
    userId: string,
    request: RegisterPasskeyDto,
    origin: RequestOrigin,
  ): Promise<PasskeyResponseDto> {
    this.passkeys.assertEnabled();
    const passkey = await this.passkeys.register(
      userId,
      request.response,
      request.name ?? null,
      origin,
    );
    return PasskeyResponseDto.from(passkey);
  }

  async list(userId: string): Promise<PasskeyListResponseDto> {
    const passkeys = await this.passkeys.list(userId);
    return { passkeys: passkeys.map((passkey) => PasskeyResponseDto.from(passkey)) };
  }

  async rename(
    userId: string,
    id: string,
    name: string,
    origin: RequestOrigin,
  ): Promise<PasskeyResponseDto> {
    return PasskeyResponseDto.from(await this.passkeys.rename(userId, id, name, origin));
  }

  remove(userId: string, id: string, origin: RequestOrigin): Promise<void> {
    return this.passkeys.remove(userId, id, origin);
  }

  loginOptions(): Promise<PublicKeyCredentialRequestOptionsJSON> {
    return this.passkeys.authenticationOptions();
  }

  /**
   * Signs in with a passkey alone: the interface's auth response, as login answers it. The
   * passkey names the account. A deactivated account is refused as login refuses it (after the
   * assertion verified, so a credential id alone tells nothing); a password lockout does not
   * stop a passkey, and a passkey sign-in leaves the failed-password count and the lockout as
   * they are (docs/behaviour.md, Passkeys).
   */
  async login(request: PasskeyLoginDto, origin: RequestOrigin): Promise<AuthResponseDto> {
    return (await this.signIn(request, origin)).response;
  }

  /**
   * The sign-in of `login` with every rule of it, for a sign-in that is not an API call (the
   * OpenID provider's hosted page): it also says which session it started and how.
   */
  async signIn(request: PasskeyLoginDto, origin: RequestOrigin): Promise<StartedLogin> {
    const verified = await this.passkeys.verifyAssertion(
      request.response,
      { ceremony: 'login', userId: null },
      origin,
    );
    if (verified instanceof PasskeyRefusal) {
      throw new UnauthorizedError(verified.message);
    }
    const refuse = async (reason: PasskeyFailureReason, message: string): Promise<Error> => {
      await this.events.recordAlone(
        {
          type: 'passkey_ceremony_failed',
          userId: verified.userId,
          ceremony: 'login',
          reason,
          passkeyId: verified.passkeyId,
        },
        origin,
      );
      return new UnauthorizedError(message);
    };
    const first = await this.usersService.findById(verified.userId);
    if (first === null) {
      throw await refuse('unknown_credential', PasskeysMessages.unknownPasskey);
    }
    // Refusals re-checked on every re-read: another request may deactivate it meanwhile.
    const refusalFor = (user: User): [PasskeyFailureReason, string] | null => {
      if (!user.isActive) {
        return ['deactivated', UsersMessages.deactivated];
      }
      if (this.requireVerifiedEmail && user.emailVerifiedAt === null) {
        return ['unverified', UsersMessages.emailNotVerified];
      }
      return null;
    };
    const refusal = refusalFor(first);
    if (refusal !== null) {
      throw await refuse(...refusal);
    }
    let pending: [PasskeyFailureReason, string] | null = null;
    try {
      const response = await this.usersService.retryOnLoginStateChange(
        first,
        async (user) => {
          const started = await this.tokensService.start(user, origin, {
            // The lockout state is written back as it was read: only its own condition.
            account: this.usersService.loginStateWrite(user.id, user, {
              failedLoginAttempts: user.failedLoginAttempts,
              lockoutEnd: user.lockoutEnd,
              lastLoginAt: this.clock.now(),
              passwordHash: user.passwordHash,
            }),
            authMethods: verified.authMethods,
            event: (familyId) => ({
              type: 'passkey_login_succeeded',
              userId: user.id,
              familyId,
              passkeyId: verified.passkeyId,
            }),
          });
          return started === 'changed' || started === 'refused'
            ? null
            : {
                response: started.response,
                sessionId: started.familyId,
                authMethods: verified.authMethods,
              };
        },
        {
          whenGone: () => new UnauthorizedError(PasskeysMessages.unknownPasskey),
          onReread: (user) => {
            pending = refusalFor(user);
            if (pending !== null) {
              throw new UnauthorizedError(pending[1]);
            }
          },
        },
      );
      this.logger.log(
        `User ${verified.userId} logged in with passkey ${verified.passkeyId}`,
        forRequest(origin.requestId),
      );
      return response;
    } catch (error: unknown) {
      if (pending !== null) {
        throw await refuse(...(pending as [PasskeyFailureReason, string]));
      }
      throw error;
    }
  }

  private async find(userId: string): Promise<User> {
    const user = await this.usersService.findById(userId);
    if (user === null) {
      throw new NotFoundError(UsersMessages.notFound);
    }
    return user;
  }
}
