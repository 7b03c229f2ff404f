import { Injectable, Logger } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import {
  ConflictError,
  InvalidArgumentError,
  UnauthorizedError,
  UnavailableError,
} from '../common/errors/domain-errors.js';
import { RandomSource } from '../common/random/random-source.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { Clock } from '../common/time/clock.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { isUniqueViolation } from '../database/unique-violation.js';
import type { FederationFailureReason } from '../events/auth-event.js';
import { AuthEvents } from '../events/auth-events.js';
import { forRequest } from '../logging/log-fields.js';
import { MailedTokens } from '../account-tokens/mailed-tokens.js';
import { PasskeyRefusal, Passkeys } from '../passkeys/passkeys.service.js';
import { FailedLogins } from '../passwords/failed-logins.js';
import { NO_PASSWORD_HASH } from '../passwords/password-hasher.js';
import { PasswordConfirmation } from '../passwords/password-confirmation.js';
import { FEDERATED_ONLY, type AuthMethod } from '../tokens/auth-methods.js';
import type { AuthResponseDto } from '../tokens/dto/auth-response.dto.js';
import { TokensService } from '../tokens/tokens.service.js';
import { MfaMessages } from '../two-factor/mfa.messages.js';
import { SecondFactorCheck } from '../two-factor/second-factor-check.js';
import { TotpFactors } from '../two-factor/totp-factors.service.js';
import { USERNAME_MAX_LENGTH, type User } from '../users/entities/user.entity.js';
import { UsersService } from '../users/users.service.js';
import type { AuthorizeQueryDto } from './dto/authorize-query.dto.js';
import type { FederationTokenDto } from './dto/federation-token.dto.js';
import { IdentityResponseDto, type IdentitiesResponseDto } from './dto/identity-response.dto.js';
import type { LinkIdentityDto } from './dto/link-identity.dto.js';
import type { LinkResponseDto } from './dto/link-response.dto.js';
import type { ProvidersResponseDto } from './dto/providers-response.dto.js';
import { FederationCode } from './entities/federation-code.entity.js';
import { FederatedIdentity } from './entities/federated-identity.entity.js';
import { FederationFlow, type FlowPurpose } from './entities/federation-flow.entity.js';
import { FederatedIdentityRepository } from './federated-identity.repository.js';
import { FederationCodeRepository } from './federation-code.repository.js';
import { FederationFlowRepository } from './federation-flow.repository.js';
import { FederationMessages } from './federation.messages.js';
import { IdentityProviders } from './identity-providers.js';
import { LinkedIdentities } from './linked-identities.js';
import { flowSecretsOf, s256 } from './providers/flow-secrets.js';
import {
  ProviderRefusal,
  type IdentityProvider,
  type ProviderProfile,
} from './providers/identity-provider.js';

const MINUTE_MS = 60_000;
/** How long a flow may spend at the provider. */
export const FLOW_LIFETIME_MINUTES = 10;
/** How long the front end has to exchange its one-time code. */
export const CODE_LIFETIME_MINUTES = 2;
/** Rounds of reading again after another instance wrote first; more means something is wrong. */
const MAX_ROUNDS = 5;

/** A sign-in the account rules refused, with the machine code its redirect carries. */
class Refused extends Error {
  constructor(
    readonly reason: FederationFailureReason,
    readonly userId: string | null,
  ) {
    super(reason);
  }
}

/** Rolls a transaction back: a row changed since it was read (another request won). */
class Changed extends Error {}

/**
 * Sign-in through other identity providers (issue 38; docs/behaviour.md, Sign-in through other
 * identity providers). A flow: `authorize` stores its state's digest and sends the browser to the
 * provider; `callback` takes the flow once (bound to its provider), has the provider's answer
 * checked, decides which account it opens, and hands the front end a one-time code bound to the
 * front end's PKCE challenge; `exchange` turns that code into a session as login does (second
 * factor included). Provider tokens are never kept.
 */
@Injectable()
export class FederationService {
  private readonly logger = new Logger(FederationService.name);

  constructor(
    private readonly providers: IdentityProviders,
    private readonly flows: FederationFlowRepository,
    private readonly codes: FederationCodeRepository,
    private readonly identities: FederatedIdentityRepository,
    private readonly linked: LinkedIdentities,
    private readonly usersService: UsersService,
    private readonly tokensService: TokensService,
    private readonly totpFactors: TotpFactors,
    private readonly passkeys: Passkeys,
    private readonly secondFactors: SecondFactorCheck,
    private readonly mailedTokens: MailedTokens,
    private readonly failedLogins: FailedLogins,
    private readonly confirmation: PasswordConfirmation,
    private readonly unitOfWork: UnitOfWork,
    private readonly clock: Clock,
    private readonly random: RandomSource,
    private readonly events: AuthEvents,
  ) {}

  listProviders(): ProvidersResponseDto {
    return {
      providers: this.providers.list().map(({ config }) => ({ id: config.id, name: config.name })),
    };
  }

  /** The provider's URL that starts a sign-in; the flow is stored once the URL could be built. */
  authorize(providerId: string, query: AuthorizeQueryDto): Promise<string> {
    return this.start(providerId, query, 'sign_in', null);
  }

  /**
   * Starts a flow: `redirectTo` must be one of Federation__RedirectUrls exactly (else 400, and
   * no redirect at all).
   */
  async start(
    providerId: string,
    query: AuthorizeQueryDto,
    purpose: FlowPurpose,
    userId: string | null,
  ): Promise<string> {
    const provider = this.providers.get(providerId);
    if (!this.providers.settings.redirectUrls.includes(query.redirectTo)) {
      throw new InvalidArgumentError(FederationMessages.redirectNotAllowed);
    }
    const state = this.random.bytes(32).toString('base64url');
    let url: URL;
    try {
      url = await provider.authorizationUrl(
        flowSecretsOf(state),
        this.providers.callbackUrl(providerId),
      );
    } catch (error: unknown) {
      this.logger.warn(
        `Provider ${providerId} could not be reached to start a flow: ${detailOf(error)}`,
      );
      throw new UnavailableError(FederationMessages.providerUnavailable);
    }
    const now = this.clock.now();
    await this.flows.insert(
      Object.assign(new FederationFlow(), {
        stateHash: digest(state),
        provider: providerId,
        purpose,
        userId,
        redirectTo: query.redirectTo,
        codeChallenge: query.codeChallenge,
        createdAt: now,
        expiresAt: new Date(now.getTime() + FLOW_LIFETIME_MINUTES * MINUTE_MS),
      }),
    );
    return url.toString();
  }

  /**
   * Starts linking an identity to the signed-in account: the password confirmed first (as the
   * other sensitive account routes ask), then a flow bound to the account.
   */
  async startLink(
    userId: string,
    providerId: string,
    request: LinkIdentityDto,
    origin: RequestOrigin,
  ): Promise<LinkResponseDto> {
    this.providers.get(providerId);
    await this.confirmation.confirm(userId, request.password, 'federation_link', origin);
    return { authorizeUrl: await this.start(providerId, request, 'link', userId) };
  }

  async listIdentities(userId: string): Promise<IdentitiesResponseDto> {
    const identities = await this.identities.listOf(userId);
    return { identities: identities.map((identity) => IdentityResponseDto.from(identity)) };
  }

  /** Unlinks an identity of the account; refused (409) when it is the last way in. */
  async unlink(userId: string, id: string, origin: RequestOrigin): Promise<void> {
    await this.linked.unlink(userId, id, origin, { kind: 'owner' });
  }

  /**
   * The provider's answer. A state this service did not hand out, or handed out and already
   * took, is a 400 with no redirect (there is nowhere known to send it); every other outcome
   * goes back to the flow's `redirectTo`, with `code`, `linked` or `error`.
   */
  async callback(
    providerId: string,
    query: Readonly<Record<string, unknown>>,
    origin: RequestOrigin,
  ): Promise<string> {
    const provider = this.providers.get(providerId);
    const state = query.state;
    if (typeof state !== 'string' || state.length === 0 || state.length > 512) {
      throw new InvalidArgumentError(FederationMessages.invalidFlow);
    }
    // Taken once, whatever follows: a replayed callback finds nothing.
    const flow = await this.flows.take(digest(state));
    if (flow === null) {
      throw new InvalidArgumentError(FederationMessages.invalidFlow);
    }
    const back = new URL(flow.redirectTo);
    const refuse = async (reason: FederationFailureReason, userId: string | null) => {
      await this.recordRefusal(flow, providerId, reason, userId, origin);
      back.searchParams.set('error', reason);
      return back.toString();
    };
    if (flow.expiresAt.getTime() <= this.clock.now().getTime()) {
      return refuse('flow_expired', flow.userId);
    }
    // A flow started at one provider and answered at another's callback: a mix-up.
    if (flow.provider !== providerId) {
      return refuse('provider_mismatch', flow.userId);
    }
    let profile: ProviderProfile;
    try {
      profile = await provider.complete(
        callbackUrlOf(this.providers.callbackUrl(providerId), query),
        flowSecretsOf(state),
        this.providers.callbackUrl(providerId),
      );
    } catch (error: unknown) {
      const code = error instanceof ProviderRefusal ? error.code : 'provider_error';
      this.logger.warn(
        `Provider ${providerId} answer refused (${code}): ${detailOf(error)}`,
        forRequest(origin.requestId),
      );
      return refuse(code, flow.userId);
    }
    try {
      if (flow.purpose === 'link' && flow.userId !== null) {
        await this.link(flow.userId, provider, profile, origin);
        back.searchParams.set('linked', providerId);
        return back.toString();
      }
      const code = await this.signIn(provider, profile, flow, origin);
      back.searchParams.set('code', code);
      return back.toString();
    } catch (error: unknown) {
      if (error instanceof Refused) {
        return refuse(error.reason, error.userId ?? flow.userId);
      }
      throw error;
    }
  }

  /**
   * The one-time code for the front end's verifier: a session, as login answers; an account with
   * a second factor gives its code in `secondFactorCode` or a passkey's assertion in `passkey`
   * (SecondFactorCheck, as login), and without either is told so while the one-time code stays
   * usable until it expires. A wrong second factor counts as at login and leaves the code usable;
   * a wrong verifier burns the code.
   */
  async exchange(request: FederationTokenDto, origin: RequestOrigin): Promise<AuthResponseDto> {
    const codeHash = digest(request.code);
    const refusals = this.events.pending();
    const refuse = (
      userId: string | null,
      provider: string,
      reason: FederationFailureReason,
      message: string = FederationMessages.invalidCode,
    ) => {
      refusals.record({ type: 'federation_login_failed', userId, provider, reason }, origin);
      return new UnauthorizedError(message);
    };
    return refusals.settle(this.redeem(codeHash, request, origin, refuse));
  }

  private async redeem(
    codeHash: string,
    request: FederationTokenDto,
    origin: RequestOrigin,
    refuse: (
      userId: string | null,
      provider: string,
      reason: FederationFailureReason,
      message?: string,
    ) => Error,
  ): Promise<AuthResponseDto> {
    let methods: readonly AuthMethod[] | 'unchecked' = 'unchecked';
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const code = await this.codes.find(codeHash);
      if (code === null) {
        throw new UnauthorizedError(FederationMessages.invalidCode);
      }
      if (!verifierMatches(code.codeChallenge, request.codeVerifier)) {
        // Whoever holds the code without the verifier is not the page that started the flow.
        await this.codes.discard(codeHash);
        throw refuse(code.userId, code.provider, 'invalid_code');
      }
      if (code.expiresAt.getTime() <= this.clock.now().getTime()) {
        throw refuse(code.userId, code.provider, 'invalid_code');
      }
      const user = await this.usersService.findById(code.userId);
      if (user === null) {
        throw new UnauthorizedError(FederationMessages.invalidCode);
      }
      const refusal = this.failedLogins.refusalFor(user);
      if (refusal !== null) {
        const reason = refusal.reason === 'locked' ? 'account_locked' : 'account_disabled';
        throw refuse(user.id, code.provider, reason, refusal.message);
      }
      if (methods === 'unchecked') {
        const started = await this.startSession(user, code, FEDERATED_ONLY, origin, true);
        if (started === 'changed') {
          continue;
        }
        if (started !== 'refused') {
          return started;
        }
        const verdict = await this.secondFactors.check(
          user.id,
          { code: request.secondFactorCode, passkey: request.passkey },
          origin,
        );
        if (verdict === 'none') {
          methods = FEDERATED_ONLY;
        } else if (verdict === 'required') {
          throw refuse(user.id, code.provider, 'mfa_required', MfaMessages.codeRequired);
        } else if (verdict === 'bad_code' || verdict instanceof PasskeyRefusal) {
          // Counted as login counts a wrong second factor; the one-time code stays usable.
          const failure = {
            type: 'federation_login_failed',
            userId: user.id,
            provider: code.provider,
            reason: 'bad_mfa_code',
          } as const;
          if (await this.failedLogins.record(user, origin, failure)) {
            throw new UnauthorizedError(
              verdict === 'bad_code' ? MfaMessages.invalidCode : verdict.message,
            );
          }
          continue;
        } else {
          methods = [...FEDERATED_ONLY, ...verdict];
        }
      }
      const started = await this.startSession(user, code, methods, origin, false);
      if (started !== 'changed' && started !== 'refused') {
        return started;
      }
    }
    throw new Error('The one-time code kept changing while it was redeemed');
  }

  private async startSession(
    user: User,
    code: FederationCode,
    methods: readonly AuthMethod[],
    origin: RequestOrigin,
    withoutFactor: boolean,
  ): Promise<AuthResponseDto | 'changed' | 'refused'> {
    const now = this.clock.now();
    try {
      const started = await this.tokensService.start(user, origin, {
        account: this.usersService.loginStateWrite(user.id, user, {
          failedLoginAttempts: 0,
          lockoutEnd: null,
          lastLoginAt: now,
          passwordHash: user.passwordHash,
        }),
        authMethods: methods,
        requires: withoutFactor ? this.totpFactors.noConfirmedFactor(user.id) : undefined,
        event: (familyId) => ({
          type: 'federation_login_succeeded',
          userId: user.id,
          familyId,
          provider: code.provider,
        }),
        alongside: async (m) => {
          if (!(await this.codes.consume(m, code.codeHash))) {
            throw new Changed();
          }
        },
      });
      if (started === 'changed' || started === 'refused') {
        return started;
      }
      this.logger.log(
        `User ${user.id} signed in through ${code.provider}`,
        forRequest(origin.requestId),
      );
      return started.response;
    } catch (error: unknown) {
      if (error instanceof Changed) {
        return 'changed';
      }
      throw error;
    }
  }

  /**
   * Which account the provider's person opens (docs/behaviour.md): the identity's, whatever
   * address it now gives; else the account with the address the provider verified, if that
   * account's address is verified too; else, the address never verified here, that account with
   * everything set up on it before removed; else a new account. Decided on rows as read and
   * written only if they are still so, so two callbacks on two instances make one account.
   */
  private async signIn(
    provider: IdentityProvider,
    profile: ProviderProfile,
    flow: FederationFlow,
    origin: RequestOrigin,
  ): Promise<string> {
    const providerId = provider.config.id;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      try {
        const resolved = await this.resolve(providerId, profile, flow, origin);
        if (resolved === null) {
          continue;
        }
        return resolved;
      } catch (error: unknown) {
        // Another instance made the account or linked the identity meanwhile: decide again.
        if (error instanceof Changed || isUniqueViolation(error)) {
          continue;
        }
        throw error;
      }
    }
    throw new Error('The account kept changing while a provider sign-in was decided');
  }

  private async resolve(
    providerId: string,
    profile: ProviderProfile,
    flow: FederationFlow,
    origin: RequestOrigin,
  ): Promise<string | null> {
    const now = this.clock.now();
    const known = await this.identities.findByPair(profile.issuer, profile.subject);
    if (known !== null) {
      const user = await this.usersService.findById(known.userId);
      if (user === null) {
        // Deleted meanwhile, with its identities: decide again.
        return null;
      }
      this.assertMaySignIn(user);
      return this.issueCode(flow, user.id, now, (m) =>
        this.identities.touch(m, known.id, profile.email, now),
      );
    }
    const email = profile.email;
    const existing = email === null ? null : await this.usersService.findByEmail(email);
    if (!profile.emailVerified || email === null) {
      // A provider that does not vouch for the address never opens an account by it.
      throw new Refused(
        existing === null ? 'email_not_verified' : 'account_not_linked',
        existing?.id ?? null,
      );
    }
    if (existing === null) {
      return this.signUp(providerId, profile, email, flow, origin, now);
    }
    this.assertMaySignIn(existing);
    const identity = this.newIdentity(existing.id, providerId, profile, now);
    if (existing.emailVerifiedAt !== null) {
      return this.issueCode(flow, existing.id, now, async (m) => {
        await this.identities.insert(m, identity);
        await this.events.record(
          m,
          {
            type: 'federation_identity_linked',
            userId: existing.id,
            provider: providerId,
            identityId: identity.id,
            via: 'sign_in',
          },
          origin,
        );
      });
    }
    return this.reclaim(existing, email, identity, flow, origin, now);
  }

  /**
   * The account has the address the provider proved, but never proved it here: whoever made it
   * may be an attacker who registered the victim's address first. The proven person gets the
   * account, and nothing set up before the proof survives it: the password (replaced by an
   * unknown one), passkeys, the second factor, linked identities, every session, pending mailed
   * links and one-time codes. All or nothing, audited.
   */
  private async reclaim(
    existing: User,
    email: string,
    identity: FederatedIdentity,
    flow: FederationFlow,
    origin: RequestOrigin,
    now: Date,
  ): Promise<string> {
    const code = await this.issueCode(flow, existing.id, now, async (m) => {
      if (
        !(await this.usersService.setPasswordHash(
          existing.id,
          NO_PASSWORD_HASH,
          m,
          existing.passwordHash,
        ))
      ) {
        throw new Changed();
      }
      if (!(await this.usersService.markEmailVerified(existing.id, email, now, m))) {
        throw new Changed();
      }
      if (
        !(await this.usersService.replaceLoginState(
          existing.id,
          existing,
          { failedLoginAttempts: 0, lockoutEnd: null },
          m,
        ))
      ) {
        throw new Changed();
      }
      await this.totpFactors.remove(m, existing.id);
      const removedPasskeys = await this.passkeys.removeAllWithin(m, existing.id);
      const removedIdentities = await this.identities.removeAllOf(m, existing.id);
      await this.codes.removeAllOf(m, existing.id);
      await this.flows.removeAllOf(m, existing.id);
      await this.mailedTokens.revokeOf(m, existing.id, [
        'password_reset',
        'email_verification',
        'email_change',
      ]);
      const ended = await this.tokensService.revokeAllWithin(m, existing.id, origin, {
        reason: 'Cuenta recuperada por el dueño verificado del email',
        keepFamilyId: null,
      });
      await this.identities.insert(m, identity);
      await this.events.record(
        m,
        {
          type: 'federation_account_reclaimed',
          userId: existing.id,
          provider: identity.provider,
          identityId: identity.id,
          removedPasskeys,
          removedIdentities,
          endedSessionIds: ended.sessionIds,
        },
        origin,
      );
    });
    this.logger.warn(
      `Account ${existing.id}, whose address was never verified, was reclaimed by its proven owner through ${identity.provider}`,
      forRequest(origin.requestId),
    );
    return code;
  }

  /** A new account: the address verified by the provider, no usable password, a derived username. */
  private async signUp(
    providerId: string,
    profile: ProviderProfile,
    email: string,
    flow: FederationFlow,
    origin: RequestOrigin,
    now: Date,
  ): Promise<string> {
    const user: User = {
      id: this.random.uuid(),
      username: this.usernameFor(profile, email),
      email,
      passwordHash: NO_PASSWORD_HASH,
      failedLoginAttempts: 0,
      lockoutEnd: null,
      isActive: true,
      createdAt: now,
      lastLoginAt: null,
      emailVerifiedAt: now,
    };
    const identity = this.newIdentity(user.id, providerId, profile, now);
    const code = await this.issueCode(
      flow,
      user.id,
      now,
      async (m) => {
        await this.identities.insert(m, identity);
        await this.events.record(
          m,
          {
            type: 'federation_signed_up',
            userId: user.id,
            provider: providerId,
            identityId: identity.id,
          },
          origin,
        );
      },
      async (m) => {
        try {
          await this.usersService.insert(user, m);
        } catch (error: unknown) {
          // Another instance made the account with this address meanwhile (the unique e-mail,
          // told as a taken address): roll back and decide again, finding it.
          if (error instanceof ConflictError) {
            throw new Changed();
          }
          throw error;
        }
      },
    );
    this.logger.log(
      `User ${user.id} signed up through ${providerId}`,
      forRequest(origin.requestId),
    );
    return code;
  }

  /** Writes `alongside` and a new one-time code for the account in one transaction; the code. */
  private async issueCode(
    flow: FederationFlow,
    userId: string,
    now: Date,
    alongside: (m: EntityManager) => Promise<void>,
    before?: (m: EntityManager) => Promise<void>,
  ): Promise<string> {
    const raw = this.random.bytes(32).toString('base64url');
    await this.unitOfWork.transaction(async (m) => {
      await before?.(m);
      await alongside(m);
      await this.codes.insert(
        m,
        Object.assign(new FederationCode(), {
          codeHash: digest(raw),
          userId,
          provider: flow.provider,
          codeChallenge: flow.codeChallenge,
          createdAt: now,
          expiresAt: new Date(now.getTime() + CODE_LIFETIME_MINUTES * MINUTE_MS),
        }),
      );
    });
    return raw;
  }

  /** Links the provider's identity to the signed-in account that started the flow. */
  private async link(
    userId: string,
    provider: IdentityProvider,
    profile: ProviderProfile,
    origin: RequestOrigin,
  ): Promise<void> {
    const now = this.clock.now();
    const account = await this.usersService.findById(userId);
    if (account === null) {
      throw new Refused('account_disabled', userId);
    }
    this.assertMaySignIn(account);
    const known = await this.identities.findByPair(profile.issuer, profile.subject);
    if (known !== null) {
      if (known.userId === userId) {
        return;
      }
      throw new Refused('identity_in_use', userId);
    }
    const identity = this.newIdentity(userId, provider.config.id, profile, now);
    try {
      await this.unitOfWork.transaction(async (m) => {
        await this.identities.insert(m, identity);
        await this.events.record(
          m,
          {
            type: 'federation_identity_linked',
            userId,
            provider: provider.config.id,
            identityId: identity.id,
            via: 'link',
          },
          origin,
        );
      });
    } catch (error: unknown) {
      if (isUniqueViolation(error)) {
        throw new Refused('identity_in_use', userId);
      }
      throw error;
    }
  }

  /** Deactivated and locked accounts are refused as a password login refuses them. */
  private assertMaySignIn(user: User): void {
    const refusal = this.failedLogins.refusalFor(user);
    if (refusal !== null) {
      throw new Refused(
        refusal.reason === 'locked' ? 'account_locked' : 'account_disabled',
        user.id,
      );
    }
  }

  private async recordRefusal(
    flow: FederationFlow,
    provider: string,
    reason: FederationFailureReason,
    userId: string | null,
    origin: RequestOrigin,
  ): Promise<void> {
    await this.events.recordAlone(
      flow.purpose === 'link' && flow.userId !== null
        ? { type: 'federation_link_refused', userId: flow.userId, provider, reason }
        : { type: 'federation_login_failed', userId, provider, reason },
      origin,
    );
  }

  private newIdentity(
    userId: string,
    provider: string,
    profile: ProviderProfile,
    now: Date,
  ): FederatedIdentity {
    return Object.assign(new FederatedIdentity(), {
      id: this.random.uuid(),
      userId,
      provider,
      issuer: profile.issuer,
      subject: profile.subject,
      email: profile.email,
      linkedAt: now,
      lastUsedAt: now,
    });
  }

  /** The provider's name for the person, or the address's local part, with a random suffix. */
  private usernameFor(profile: ProviderProfile, email: string): string {
    const base =
      (profile.displayName ?? email.split('@')[0] ?? 'user')
        .normalize('NFKC')
        .replace(/[^\p{L}\p{N}._-]+/gu, '')
        .slice(0, USERNAME_MAX_LENGTH - 7) || 'user';
    return `${base}-${this.random.bytes(3).toString('hex')}`;
  }
}

function digest(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** Whether S256(verifier) is the stored challenge, compared in constant time. */
function verifierMatches(challenge: string, verifier: string): boolean {
  const expected = Buffer.from(challenge, 'utf8');
  const actual = Buffer.from(s256(verifier), 'utf8');
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** The callback as it arrived: the registered URL with the query the provider sent. */
function callbackUrlOf(registered: string, query: Readonly<Record<string, unknown>>): URL {
  const url = new URL(registered);
  for (const [key, value] of Object.entries(query)) {
    if (typeof value === 'string') {
      url.searchParams.append(key, value);
    } else if (Array.isArray(value)) {
      // A repeated parameter: passed on as sent, so the library refuses it.
      for (const item of value) {
        url.searchParams.append(key, String(item));
      }
    }
  }
  return url;
}

/** What a failure says for the log: its class and message, never a token (the library's messages name checks). */
function detailOf(error: unknown): string {
  if (error instanceof ProviderRefusal) {
    return error.detail;
  }
  return error instanceof Error ? `${error.name}: ${error.message}` : 'unknown failure';
}
