import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { readFileSync } from 'node:fs';
import type { EntityManager } from 'typeorm';
import { FakeClock } from '../../test/utils/fake-clock.js';
import { RecordingAuthEvents } from '../../test/utils/recording-auth-events.js';
import { errorOf } from '../../test/utils/rejection.js';
import { InvalidArgumentError, UnavailableError } from '../common/errors/domain-errors.js';
import { RandomSource } from '../common/random/random-source.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/app-config.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { AuthEvent } from '../events/auth-event.js';
import { AuthEvents } from '../events/auth-events.js';
import type { AuthenticationResponseDto } from './dto/authentication-response.dto.js';
import type { RegistrationResponseDto } from './dto/registration-response.dto.js';
import type { PasskeyChallenge } from './entities/passkey-challenge.entity.js';
import type { Passkey } from './entities/passkey.entity.js';
import { PasskeyChallengeRepository } from './passkey-challenge.repository.js';
import { PasskeyRepository, type PasskeyUse } from './passkey.repository.js';
import { PasskeyRefusal, Passkeys } from './passkeys.service.js';

// Ceremonies recorded once from test/utils/software-authenticator.ts (an authenticator written
// from the WebAuthn specification) with fixed challenges, and replayed here: every refusal of
// the service is one recorded answer the real @simplewebauthn/server checks.

interface Recorded {
  readonly rpId: string;
  readonly origin: string;
  readonly userId: string;
  readonly registrationChallenge: string;
  readonly assertionChallenge: string;
  readonly registration: RegistrationResponseDto;
  readonly registrationOtherOrigin: RegistrationResponseDto;
  readonly registrationWithoutUv: RegistrationResponseDto;
  readonly assertion: AuthenticationResponseDto;
  readonly otherOrigin: AuthenticationResponseDto;
  readonly otherRp: AuthenticationResponseDto;
  readonly withoutUv: AuthenticationResponseDto;
  readonly counterBehind: AuthenticationResponseDto;
  readonly unknownCredential: AuthenticationResponseDto;
}

const RECORDED = JSON.parse(
  readFileSync(new URL('../../test/fixtures/passkey-ceremonies.json', import.meta.url), 'utf8'),
) as Recorded;
const NOW = new Date('2026-01-01T00:00:00.000Z');
const ORIGIN: RequestOrigin = { ip: '203.0.113.7', userAgent: null, requestId: 'req-1' };
const OTHER_USER = '7c9e6679-7425-40de-944b-e07fc1f90ae7';

/** Randomness whose bytes are the recorded challenges, in the order the test asks for them. */
class RecordedRandom extends RandomSource {
  readonly challenges: Buffer[] = [];

  override bytes(size: number): Buffer {
    return this.challenges.shift() ?? super.bytes(size);
  }
}

class InMemoryPasskeys {
  readonly rows: Passkey[] = [];
  listOf = (userId: string) => Promise.resolve(this.rows.filter((p) => p.userId === userId));
  countOf = (userId: string) =>
    Promise.resolve(this.rows.filter((p) => p.userId === userId).length);
  findByCredentialId = (credentialId: string) =>
    Promise.resolve(this.rows.find((p) => p.credentialId === credentialId) ?? null);
  findOf = (userId: string, id: string) =>
    Promise.resolve(this.rows.find((p) => p.userId === userId && p.id === id) ?? null);
  insert = (_m: EntityManager, passkey: Passkey) => {
    this.rows.push({ ...passkey });
    return Promise.resolve();
  };
  recordUse = (passkey: Passkey, use: PasskeyUse) => {
    const row = this.rows.find((p) => p.id === passkey.id && p.counter === passkey.counter);
    if (row === undefined) {
      return Promise.resolve(false);
    }
    Object.assign(row, { counter: use.counter, isBackedUp: use.isBackedUp, lastUsedAt: use.at });
    return Promise.resolve(true);
  };
}

class InMemoryChallenges {
  readonly rows = new Map<string, PasskeyChallenge>();
  insert = (challenge: PasskeyChallenge) => {
    this.rows.set(challenge.challengeHash, challenge);
    return Promise.resolve();
  };
  take = (hash: string) => {
    const found = this.rows.get(hash) ?? null;
    this.rows.delete(hash);
    return Promise.resolve(found);
  };
}

async function build(passkeysOn = true) {
  const passkeys = new InMemoryPasskeys();
  const challenges = new InMemoryChallenges();
  const random = new RecordedRandom();
  const clock = new FakeClock(NOW);
  const moduleRef = await Test.createTestingModule({
    providers: [
      Passkeys,
      { provide: PasskeyRepository, useValue: passkeys },
      { provide: PasskeyChallengeRepository, useValue: challenges },
      { provide: Clock, useValue: clock },
      { provide: RandomSource, useValue: random },
      { provide: AuthEvents, useClass: RecordingAuthEvents },
      {
        provide: UnitOfWork,
        useValue: {
          transaction: (work: (m: EntityManager) => Promise<unknown>) => work({} as EntityManager),
          lock: () => Promise.resolve(),
        },
      },
      {
        provide: AppConfig,
        useValue: {
          passkeys: passkeysOn
            ? { rpId: RECORDED.rpId, rpName: 'Keygate', origins: [RECORDED.origin] }
            : null,
        },
      },
    ],
  }).compile();
  const events: AuthEvent[] = [];
  moduleRef.get(AuthEvents).subscribe(({ event }) => events.push(event));
  const sut = moduleRef.get(Passkeys);
  /** Hands out the recorded challenge of `kind` through the options the service makes. */
  const issue = async (kind: 'registration' | 'assertion'): Promise<void> => {
    if (kind === 'registration') {
      random.challenges.push(Buffer.from(RECORDED.registrationChallenge, 'base64url'));
      const options = await sut.registrationOptions({
        id: RECORDED.userId,
        email: 'alice@example.com',
        username: 'alice',
      });
      expect(options.challenge).toBe(RECORDED.registrationChallenge);
    } else {
      random.challenges.push(Buffer.from(RECORDED.assertionChallenge, 'base64url'));
      expect((await sut.authenticationOptions()).challenge).toBe(RECORDED.assertionChallenge);
    }
  };
  /** Registers the recorded credential, as the account of the recordings. */
  const registered = async (): Promise<Passkey> => {
    await issue('registration');
    return sut.register(RECORDED.userId, RECORDED.registration, null, ORIGIN);
  };
  /** Registers the recorded credential, then hands out the recorded assertion's challenge. */
  const signInAsked = async (): Promise<Passkey> => {
    const passkey = await registered();
    await issue('assertion');
    return passkey;
  };
  return { sut, passkeys, challenges, clock, events, issue, registered, signInAsked };
}

/**
 * A sign-in of the recordings' account refused as `expected` says: the refusal, the counter
 * left where it was, the failure recorded.
 */
function expectSignInRefused(
  { passkeys, events }: Pick<Awaited<ReturnType<typeof build>>, 'passkeys' | 'events'>,
  passkey: Passkey,
  actual: unknown,
  expected: { reason: 'bad_response' | 'counter_regressed'; message: string; counter: number },
): void {
  expect(actual).toEqual(new PasskeyRefusal(expected.reason, expected.message, RECORDED.userId));
  expect(passkeys.rows[0]?.counter).toBe(expected.counter);
  expect(events.at(-1)).toEqual({
    type: 'passkey_ceremony_failed',
    userId: RECORDED.userId,
    ceremony: 'login',
    reason: expected.reason,
    passkeyId: passkey.id,
  });
}

const login = { ceremony: 'login', userId: null } as const;

describe(Passkeys.name, () => {
  describe('registration', () => {
    it('should store the recorded credential with its key, counter, transports and flags', async () => {
      const { passkeys, events, registered } = await build();

      const passkey = await registered();

      expect(passkeys.rows).toEqual([
        {
          id: passkey.id,
          userId: RECORDED.userId,
          credentialId: RECORDED.registration.id,
          publicKey: expect.stringMatching(/^[\w-]{100,}$/) as unknown,
          counter: 0,
          transports: 'internal',
          isBackupEligible: false,
          isBackedUp: false,
          name: 'Llave de acceso',
          createdAt: NOW,
          lastUsedAt: null,
        },
      ]);
      expect(events).toEqual([
        { type: 'passkey_registered', userId: RECORDED.userId, passkeyId: passkey.id },
      ]);
    });

    it.each<[string, 'registrationOtherOrigin' | 'registrationWithoutUv']>([
      ['another origin', 'registrationOtherOrigin'],
      ['no user verification', 'registrationWithoutUv'],
    ])('should refuse a credential made with %s', async (_case, key) => {
      const { sut, passkeys, events, issue } = await build();
      await issue('registration');

      const error = await errorOf(sut.register(RECORDED.userId, RECORDED[key], null, ORIGIN));

      expect(error).toEqual(new InvalidArgumentError('No se pudo verificar la llave de acceso.'));
      expect(passkeys.rows).toEqual([]);
      expect(events).toEqual([
        {
          type: 'passkey_ceremony_failed',
          userId: RECORDED.userId,
          ceremony: 'registration',
          reason: 'bad_response',
          passkeyId: null,
        },
      ]);
    });

    it("should refuse the recorded credential replayed, and for another account's challenge", async () => {
      const { sut, issue, registered } = await build();
      await registered();

      const replayed = await errorOf(
        sut.register(RECORDED.userId, RECORDED.registration, null, ORIGIN),
      );
      await issue('registration');
      const ofOther = await errorOf(sut.register(OTHER_USER, RECORDED.registration, null, ORIGIN));

      const refused = new InvalidArgumentError(
        'El desafío de la llave de acceso no es válido o ya se usó.',
      );
      expect(replayed).toEqual(refused);
      expect(ofOther).toEqual(refused);
    });
  });

  describe('assertions', () => {
    it('should accept the recorded assertion once, move the counter and say hwk and user', async () => {
      const { sut, passkeys, signInAsked } = await build();
      const passkey = await signInAsked();

      const verified = await sut.verifyAssertion(RECORDED.assertion, login, ORIGIN);
      const replayed = await sut.verifyAssertion(RECORDED.assertion, login, ORIGIN);

      expect(verified).toEqual({
        userId: RECORDED.userId,
        passkeyId: passkey.id,
        authMethods: ['hwk', 'user'],
      });
      expect(passkeys.rows[0]).toMatchObject({ counter: 5, lastUsedAt: NOW });
      expect(replayed).toEqual(
        new PasskeyRefusal(
          'bad_challenge',
          'El desafío de la llave de acceso no es válido o ya se usó.',
          null,
        ),
      );
    });

    it.each<[string, 'otherOrigin' | 'otherRp' | 'withoutUv']>([
      ['another origin', 'otherOrigin'],
      ['another relying party', 'otherRp'],
      ['no user verification', 'withoutUv'],
    ])('should refuse an assertion made with %s', async (_case, key) => {
      const built = await build();
      const passkey = await built.signInAsked();

      const refusal = await built.sut.verifyAssertion(RECORDED[key], login, ORIGIN);

      expectSignInRefused(built, passkey, refusal, {
        reason: 'bad_response',
        message: 'No se pudo verificar la llave de acceso.',
        counter: 0,
      });
    });

    it('should refuse a tampered signature', async () => {
      const { sut, signInAsked } = await build();
      await signInAsked();
      const signature = Buffer.from(RECORDED.assertion.response.signature, 'base64url');
      signature[signature.length - 1] ^= 1;
      const tampered = {
        ...RECORDED.assertion,
        response: { ...RECORDED.assertion.response, signature: signature.toString('base64url') },
      };

      const refusal = await sut.verifyAssertion(tampered, login, ORIGIN);

      expect(refusal).toMatchObject({ reason: 'bad_response' });
    });

    it('should refuse a counter behind the stored one as a cloned authenticator', async () => {
      const built = await build();
      const passkey = await built.signInAsked();
      expect(await built.sut.verifyAssertion(RECORDED.assertion, login, ORIGIN)).not.toBeInstanceOf(
        PasskeyRefusal,
      );
      await built.issue('assertion');

      const refusal = await built.sut.verifyAssertion(RECORDED.counterBehind, login, ORIGIN);

      expectSignInRefused(built, passkey, refusal, {
        reason: 'counter_regressed',
        message: 'Llave de acceso rechazada: su contador de firmas retrocedió.',
        counter: 5,
      });
    });

    it('should refuse an unknown credential, and one of another account', async () => {
      const { sut, issue, signInAsked } = await build();
      await signInAsked();
      const unknown = await sut.verifyAssertion(RECORDED.unknownCredential, login, ORIGIN);
      await issue('assertion');
      const ofOther = await sut.verifyAssertion(
        RECORDED.assertion,
        { ceremony: 'second_factor', userId: OTHER_USER },
        ORIGIN,
      );

      expect(unknown).toEqual(
        new PasskeyRefusal('unknown_credential', 'Llave de acceso no reconocida.', null),
      );
      expect(ofOther).toEqual(
        new PasskeyRefusal('other_account', 'Llave de acceso no reconocida.', OTHER_USER),
      );
    });

    it('should refuse an expired challenge, and a registration challenge for an assertion', async () => {
      const { sut, clock, issue, signInAsked } = await build();
      await signInAsked();
      clock.advance(5 * 60 * 1000);
      const expired = await sut.verifyAssertion(RECORDED.assertion, login, ORIGIN);
      clock.set(NOW);
      await issue('registration');
      const wrongKind = await sut.verifyAssertion(
        {
          ...RECORDED.assertion,
          response: {
            ...RECORDED.assertion.response,
            clientDataJSON: RECORDED.registration.response.clientDataJSON,
          },
        },
        login,
        ORIGIN,
      );

      expect(expired).toMatchObject({ reason: 'bad_challenge' });
      expect(wrongKind).toMatchObject({ reason: 'bad_challenge' });
    });
  });

  it('should answer 503 on every ceremony when passkeys are off', async () => {
    const { sut } = await build(false);

    expect(await errorOf(sut.authenticationOptions())).toEqual(
      new UnavailableError('Las llaves de acceso no están configuradas.'),
    );
    expect(() => sut.assertEnabled()).toThrow(UnavailableError);
  });
});
