import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type {
  AuthenticationResponseJSON,
  AuthenticatorTransport,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { hash } from 'node:crypto';
import {
  ConflictError,
  InvalidArgumentError,
  NotFoundError,
  UnavailableError,
} from '../common/errors/domain-errors.js';
import { RandomSource } from '../common/random/random-source.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/app-config.js';
import type { PasskeysConfig } from '../config/settings/passkeys-settings.js';
import { isUniqueViolation } from '../database/unique-violation.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type {
  AdminApiActor,
  PasskeyCeremonyKind,
  PasskeyFailureReason,
} from '../events/auth-event.js';
import { AuthEvents } from '../events/auth-events.js';
import { forRequest } from '../logging/log-fields.js';
import { passkeyMethods, type AuthMethod } from '../tokens/auth-methods.js';
import type { AuthenticationResponseDto } from './dto/authentication-response.dto.js';
import type { RegistrationResponseDto } from './dto/registration-response.dto.js';
import { PasskeyChallenge, type PasskeyCeremony } from './entities/passkey-challenge.entity.js';
import { DEFAULT_PASSKEY_NAME, Passkey } from './entities/passkey.entity.js';
import { PasskeyChallengeRepository } from './passkey-challenge.repository.js';
import { PasskeyRepository } from './passkey.repository.js';
import { PasskeysMessages } from './passkeys.messages.js';

/** How long a challenge may be answered, and the timeout the options give the browser. */
export const PASSKEY_CHALLENGE_TTL_MS = 5 * 60 * 1000;
/** An account holds at most this many passkeys (PasskeysMessages.tooMany says it): enough for every device, bounded for storage. */
export const MAX_PASSKEYS_PER_ACCOUNT = 20;
/** EdDSA, ES256, RS256: what authenticators make; no post-quantum keys (their size is unbounded here). */
const ALGORITHMS = [-8, -7, -257];
/** A passkey's id as the routes take it; anything else names no passkey (and reaches no query). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** The signature counter is a uint32; the column is a signed 32-bit integer on PostgreSQL. */
const MAX_STORED_COUNTER = 2 ** 31 - 1;

/** The account an assertion is checked for: known (second factor, proof) or not (sign-in). */
export interface AssertionCheck {
  readonly ceremony: Exclude<PasskeyCeremonyKind, 'registration'>;
  /** The account the passkey must belong to; null when the passkey says whose it is. */
  readonly userId: string | null;
}

/** A verified assertion: whose passkey signed, which, and what it adds to `amr`. */
export interface VerifiedAssertion {
  readonly userId: string;
  readonly passkeyId: string;
  readonly authMethods: readonly AuthMethod[];
}

/** A refused ceremony: why (for the trail and the caller's counting) and what the client is told. */
export class PasskeyRefusal {
  constructor(
    readonly reason: PasskeyFailureReason,
    readonly message: string,
    readonly userId: string | null,
  ) {}
}

/**
 * The account whose passkey a registration is for, as creation options name it: the user handle
 * is the account id (never the e-mail, which can change), the names what the browser shows.
 */
export interface PasskeyOwner {
  readonly id: string;
  readonly email: string;
  readonly username: string;
}

/**
 * Passkeys (WebAuthn): the ceremonies' challenges, registration, the check of an assertion, and
 * the account's list. The only code that calls @simplewebauthn/server. It says nothing about
 * passwords, lockouts or sessions: the services that ask it decide those.
 */
@Injectable()
export class Passkeys {
  private readonly logger = new Logger(Passkeys.name);
  private readonly config: PasskeysConfig | null;

  constructor(
    private readonly passkeys: PasskeyRepository,
    private readonly challenges: PasskeyChallengeRepository,
    private readonly clock: Clock,
    private readonly random: RandomSource,
    private readonly events: AuthEvents,
    private readonly unitOfWork: UnitOfWork,
    config: AppConfig,
  ) {
    this.config = config.passkeys;
  }

  /** Whether Passkeys__RpId is configured; off, every passkey route answers 503. */
  get isEnabled(): boolean {
    return this.config !== null;
  }

  /** 503 `Las llaves de acceso no están configuradas.` when Passkeys__RpId is not set. */
  assertEnabled(): void {
    this.required();
  }

  /** Options for `navigator.credentials.create()`, with a challenge for this account only. */
  async registrationOptions(owner: PasskeyOwner): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const config = this.required();
    const existing = await this.passkeys.listOf(owner.id);
    const { generateRegistrationOptions } = await import('@simplewebauthn/server');
    const options = await generateRegistrationOptions({
      rpName: config.rpName,
      rpID: config.rpId,
      userID: new TextEncoder().encode(owner.id),
      userName: owner.email,
      userDisplayName: owner.username,
      challenge: await this.newChallenge('registration', owner.id),
      timeout: PASSKEY_CHALLENGE_TTL_MS,
      attestationType: 'none',
      excludeCredentials: existing.map((passkey) => ({
        id: passkey.credentialId,
        transports: transportsOf(passkey),
      })),
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      supportedAlgorithmIDs: ALGORITHMS,
    });
    return options;
  }

  /** Options for `navigator.credentials.get()`: any discoverable passkey may answer. */
  async authenticationOptions(): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const config = this.required();
    const { generateAuthenticationOptions } = await import('@simplewebauthn/server');
    return generateAuthenticationOptions({
      rpID: config.rpId,
      challenge: await this.newChallenge('authentication', null),
      timeout: PASSKEY_CHALLENGE_TTL_MS,
      userVerification: 'required',
    });
  }

  /**
   * Verifies a browser's new credential against this account's registration challenge, and stores
   * it. 400 for a challenge or a response that does not verify, 409 for a credential already
   * stored or one passkey too many. Its event commits with it.
   */
  async register(
    userId: string,
    response: RegistrationResponseDto,
    name: string | null,
    origin: RequestOrigin,
  ): Promise<Passkey> {
    const config = this.required();
    const refuse = async (reason: PasskeyFailureReason, error: Error): Promise<Error> => {
      await this.recordFailure('registration', reason, userId, null, origin);
      return error;
    };
    if (!(await this.takeChallenge(response.response.clientDataJSON, 'registration', userId))) {
      throw await refuse(
        'bad_challenge',
        new InvalidArgumentError(PasskeysMessages.challengeInvalid),
      );
    }
    const { verifyRegistrationResponse } = await import('@simplewebauthn/server');
    const info = await attempt(async () => {
      const result = await verifyRegistrationResponse({
        response: registrationJson(response),
        // The challenge was matched above, as its digest, and is used up.
        expectedChallenge: () => true,
        expectedOrigin: [...config.origins],
        expectedRPID: config.rpId,
        requireUserVerification: true,
        supportedAlgorithmIDs: ALGORITHMS,
      });
      return result.verified ? result.registrationInfo : null;
    });
    if (info === null || info.credential.counter > MAX_STORED_COUNTER) {
      throw await refuse(
        'bad_response',
        new InvalidArgumentError(PasskeysMessages.verificationFailed),
      );
    }
    const passkey = Object.assign(new Passkey(), {
      id: this.random.uuid(),
      userId,
      credentialId: info.credential.id,
      publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
      counter: info.credential.counter,
      transports: storedTransports(response.response.transports),
      isBackupEligible: info.credentialDeviceType === 'multiDevice',
      isBackedUp: info.credentialBackedUp,
      name: name ?? DEFAULT_PASSKEY_NAME,
      createdAt: this.clock.now(),
      lastUsedAt: null,
    });
    const stored = await this.unitOfWork
      .transaction(async (m) => {
        // Two registrations of one account take turns on PostgreSQL, so the bound holds.
        await this.unitOfWork.lock(m, `passkeys:${userId}`);
        if ((await this.passkeys.countOf(userId, m)) >= MAX_PASSKEYS_PER_ACCOUNT) {
          return 'too_many' as const;
        }
        await this.passkeys.insert(m, passkey);
        await this.events.record(
          m,
          { type: 'passkey_registered', userId, passkeyId: passkey.id },
          origin,
        );
        return 'stored' as const;
      })
      .catch((error: unknown) => {
        if (isUniqueViolation(error)) {
          return 'already_registered' as const;
        }
        throw error;
      });
    if (stored === 'too_many') {
      throw await refuse('too_many', new ConflictError(PasskeysMessages.tooMany));
    }
    if (stored === 'already_registered') {
      throw await refuse(
        'already_registered',
        new ConflictError(PasskeysMessages.alreadyRegistered),
      );
    }
    this.logger.log(
      `User ${userId} registered passkey ${passkey.id}`,
      forRequest(origin.requestId),
    );
    return passkey;
  }

  /**
   * Checks an assertion made with a challenge of the authentication options: the challenge (used
   * up whatever follows), the stored passkey it names (of `check.userId` when given), the
   * signature, origin, relying party and user verification, then the signature counter, which
   * must move forward unless the authenticator keeps none. A refusal is recorded and answered,
   * never thrown, so each caller decides what it costs (a second factor's counts toward the
   * lockout). A counter that goes backwards means a cloned authenticator: refused, and logged.
   */
  async verifyAssertion(
    response: AuthenticationResponseDto,
    check: AssertionCheck,
    origin: RequestOrigin,
  ): Promise<VerifiedAssertion | PasskeyRefusal> {
    const config = this.required();
    const refuse = async (
      reason: PasskeyFailureReason,
      message: string,
      passkey: Passkey | null,
    ): Promise<PasskeyRefusal> => {
      const userId = passkey?.userId ?? check.userId;
      await this.recordFailure(check.ceremony, reason, userId, passkey?.id ?? null, origin);
      return new PasskeyRefusal(reason, message, userId);
    };
    if (!(await this.takeChallenge(response.response.clientDataJSON, 'authentication', null))) {
      return refuse('bad_challenge', PasskeysMessages.challengeInvalid, null);
    }
    const passkey = await this.passkeys.findByCredentialId(response.id);
    if (passkey === null) {
      return refuse('unknown_credential', PasskeysMessages.unknownPasskey, null);
    }
    if (check.userId !== null && passkey.userId !== check.userId) {
      // Told as an unknown passkey: the answer does not say the credential exists elsewhere.
      return refuse('other_account', PasskeysMessages.unknownPasskey, null);
    }
    const userHandle = response.response.userHandle;
    if (
      userHandle !== undefined &&
      userHandle !== null &&
      userHandle !== Buffer.from(passkey.userId).toString('base64url')
    ) {
      return refuse('bad_response', PasskeysMessages.verificationFailed, passkey);
    }
    const { verifyAuthenticationResponse } = await import('@simplewebauthn/server');
    const info = await attempt(async () => {
      const result = await verifyAuthenticationResponse({
        response: authenticationJson(response),
        expectedChallenge: () => true,
        expectedOrigin: [...config.origins],
        expectedRPID: config.rpId,
        requireUserVerification: true,
        credential: {
          id: passkey.credentialId,
          publicKey: Buffer.from(passkey.publicKey, 'base64url'),
          // Compared below instead, after the signature, so a regression is told apart from
          // a bad signature (the library throws the same kind of error for both).
          counter: 0,
          transports: transportsOf(passkey),
        },
      });
      return result.verified ? result.authenticationInfo : null;
    });
    if (info === null || info.newCounter > MAX_STORED_COUNTER) {
      return refuse('bad_response', PasskeysMessages.verificationFailed, passkey);
    }
    const keepsCounter = info.newCounter > 0 || passkey.counter > 0;
    const isBehind = keepsCounter && info.newCounter <= passkey.counter;
    const recorded =
      !isBehind &&
      (await this.passkeys.recordUse(passkey, {
        counter: info.newCounter,
        isBackedUp: info.credentialBackedUp,
        at: this.clock.now(),
      }));
    if (!recorded) {
      if (!isBehind && (await this.passkeys.findOf(passkey.userId, passkey.id)) === null) {
        return refuse('unknown_credential', PasskeysMessages.unknownPasskey, null);
      }
      // Behind, or another use with the same counter won: two authenticators share the key.
      this.logger.warn(
        `Passkey ${passkey.id} of user ${passkey.userId} refused: its signature counter ` +
          `${info.newCounter} is not past ${passkey.counter} (a cloned authenticator?)`,
        forRequest(origin.requestId),
      );
      return refuse('counter_regressed', PasskeysMessages.counterRegressed, passkey);
    }
    return {
      userId: passkey.userId,
      passkeyId: passkey.id,
      authMethods: passkeyMethods(passkey.isBackupEligible),
    };
  }

  /**
   * The account's passkeys, oldest first, for an operator's view of it: also when passkeys are
   * off, as those registered before still exist (and can be removed).
   */
  listForAdministrator(userId: string): Promise<Passkey[]> {
    return this.passkeys.listOf(userId);
  }

  /** The account's passkeys, oldest first. 503 when passkeys are off. */
  list(userId: string): Promise<Passkey[]> {
    this.required();
    return this.passkeys.listOf(userId);
  }

  /** 404 when the account has no such passkey. */
  async rename(userId: string, id: string, name: string, origin: RequestOrigin): Promise<Passkey> {
    this.required();
    if (!UUID.test(id)) {
      throw new NotFoundError(PasskeysMessages.notFound);
    }
    const renamed = await this.unitOfWork.transaction(async (m) => {
      if (!(await this.passkeys.rename(m, userId, id, name))) {
        return null;
      }
      await this.events.record(m, { type: 'passkey_renamed', userId, passkeyId: id }, origin);
      return this.passkeys.findOf(userId, id, m);
    });
    if (renamed === null) {
      throw new NotFoundError(PasskeysMessages.notFound);
    }
    return renamed;
  }

  /** 404 when the account has no such passkey; from now on its assertions are refused. */
  async remove(userId: string, id: string, origin: RequestOrigin): Promise<void> {
    this.required();
    if (!UUID.test(id)) {
      throw new NotFoundError(PasskeysMessages.notFound);
    }
    const removed = await this.unitOfWork.transaction(async (m) => {
      if (!(await this.passkeys.remove(m, userId, id))) {
        return false;
      }
      await this.events.record(m, { type: 'passkey_removed', userId, passkeyId: id }, origin);
      return true;
    });
    if (!removed) {
      throw new NotFoundError(PasskeysMessages.notFound);
    }
    this.logger.log(`User ${userId} removed passkey ${id}`, forRequest(origin.requestId));
  }

  /**
   * Removes every passkey of the account (the admin CLI's `users:passkeys-remove`), with its
   * `admin_passkeys_removed` event; how many there were. Works with passkeys off too, so an
   * operator can clear them after turning the feature off.
   */
  async removeAllByAdministrator(
    userId: string,
    origin: RequestOrigin,
    actor?: AdminApiActor,
  ): Promise<number> {
    const removed = await this.unitOfWork.transaction(async (m) => {
      const count = await this.passkeys.removeAllOf(m, userId);
      await this.events.record(
        m,
        {
          type: 'admin_passkeys_removed',
          userId,
          removedCount: count,
          ...(actor === undefined ? {} : { actor }),
        },
        origin,
      );
      return count;
    });
    if (removed > 0) {
      this.logger.log(`${removed} passkey(s) of user ${userId} removed by an administrator`);
    }
    return removed;
  }

  /**
   * Removes every passkey of the account inside the caller's transaction, with no event of its
   * own (the caller's says why): an account taken over by the proven owner of its address.
   */
  removeAllWithin(m: EntityManager, userId: string): Promise<number> {
    return this.passkeys.removeAllOf(m, userId);
  }

  /** How many passkeys the account has, inside the caller's transaction. */
  countWithin(m: EntityManager, userId: string): Promise<number> {
    return this.passkeys.countOf(userId, m);
  }

  private required(): PasskeysConfig {
    if (this.config === null) {
      throw new UnavailableError(PasskeysMessages.unavailable);
    }
    return this.config;
  }

  /**
   * A new random challenge of 32 bytes, stored as the digest of its base64url form (what the
   * browser's client data echoes) until used or expired. Bytes, since the library would encode
   * a string once more.
   */
  private async newChallenge(
    ceremony: PasskeyCeremony,
    userId: string | null,
  ): Promise<Uint8Array<ArrayBuffer>> {
    const bytes = new Uint8Array(new ArrayBuffer(32));
    bytes.set(this.random.bytes(32));
    const challenge = Buffer.from(bytes).toString('base64url');
    const now = this.clock.now();
    await this.challenges.insert(
      Object.assign(new PasskeyChallenge(), {
        challengeHash: challengeDigest(challenge),
        ceremony,
        userId,
        expiresAt: new Date(now.getTime() + PASSKEY_CHALLENGE_TTL_MS),
      }),
      now,
    );
    return bytes;
  }

  /**
   * Uses up the challenge the client data names: true only if it exists, is unexpired, and was
   * made for `ceremony` and `userId`. A challenge presented for anything else is used up too.
   */
  private async takeChallenge(
    clientDataJSON: string,
    ceremony: PasskeyCeremony,
    userId: string | null,
  ): Promise<boolean> {
    const challenge = challengeOf(clientDataJSON);
    if (challenge === null) {
      return false;
    }
    const taken = await this.challenges.take(challengeDigest(challenge));
    return (
      taken !== null &&
      taken.ceremony === ceremony &&
      taken.userId === userId &&
      taken.expiresAt.getTime() > this.clock.now().getTime()
    );
  }

  private recordFailure(
    ceremony: PasskeyCeremonyKind,
    reason: PasskeyFailureReason,
    userId: string | null,
    passkeyId: string | null,
    origin: RequestOrigin,
  ): Promise<void> {
    return this.events.recordAlone(
      { type: 'passkey_ceremony_failed', userId, ceremony, reason, passkeyId },
      origin,
    );
  }
}

/** The challenge a client data JSON carries, or null when it is not such a JSON. */
function challengeOf(clientDataJSON: string): string | null {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null || !('challenge' in parsed)) {
      return null;
    }
    const { challenge } = parsed;
    return typeof challenge === 'string' && challenge.length > 0 && challenge.length <= 512
      ? challenge
      : null;
  } catch {
    return null;
  }
}

function challengeDigest(challenge: string): string {
  return hash('sha256', challenge, 'hex');
}

/**
 * The library's verdict, or null when it threw: it throws on every malformed or mismatching
 * response (bad CBOR, another origin, a missing flag), which are all the client's failures.
 */
async function attempt<T>(verify: () => Promise<T | null>): Promise<T | null> {
  try {
    return await verify();
  } catch {
    return null;
  }
}

function transportsOf(passkey: Passkey): AuthenticatorTransport[] {
  return passkey.transports === null
    ? []
    : (passkey.transports.split(',') as AuthenticatorTransport[]);
}

function storedTransports(transports: readonly string[] | undefined): string | null {
  return transports === undefined || transports.length === 0
    ? null
    : [...new Set(transports)].sort().join(',');
}

/** The validated body in the library's type, field by field: nothing unchecked passes through. */
function registrationJson(response: RegistrationResponseDto): RegistrationResponseJSON {
  const { clientDataJSON, attestationObject, authenticatorData, transports } = response.response;
  return {
    id: response.id,
    rawId: response.rawId,
    type: response.type,
    response: { clientDataJSON, attestationObject, authenticatorData, transports },
    authenticatorAttachment: response.authenticatorAttachment,
    clientExtensionResults: {},
  };
}

function authenticationJson(response: AuthenticationResponseDto): AuthenticationResponseJSON {
  const { clientDataJSON, authenticatorData, signature, userHandle } = response.response;
  return {
    id: response.id,
    rawId: response.rawId,
    type: response.type,
    response: { clientDataJSON, authenticatorData, signature, userHandle: userHandle ?? undefined },
    authenticatorAttachment: response.authenticatorAttachment,
    clientExtensionResults: {},
  };
}
