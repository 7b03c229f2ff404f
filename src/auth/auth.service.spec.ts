import { jest } from '@jest/globals';
import { HttpException, Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { EntityManager } from 'typeorm';
import { buildUser } from '../../test/factories/user.factory.js';
import { FakeClock } from '../../test/utils/fake-clock.js';
import { originAt } from '../../test/utils/origin.js';
import { errorOf } from '../../test/utils/rejection.js';
import { ConflictError, UnauthorizedError } from '../common/errors/domain-errors.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { RandomSource } from '../common/random/random-source.js';
import { Clock } from '../common/time/clock.js';
import type { AuthEvent } from '../events/auth-event.js';
import { AuthEvents } from '../events/auth-events.js';
import { RecordingAuthEvents } from '../../test/utils/recording-auth-events.js';
import type { AuthResponseDto } from '../tokens/dto/auth-response.dto.js';
import { TotpFactors } from '../two-factor/totp-factors.service.js';
import { Passkeys } from '../passkeys/passkeys.service.js';
import { SecondFactorCheck } from '../two-factor/second-factor-check.js';
import type { GuardedWrite, Precondition } from '../database/guarded-write.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { TokensService, type IssuedSession, type SessionStart } from '../tokens/tokens.service.js';
import { UserResponseDto } from '../users/dto/user-response.dto.js';
import type { User } from '../users/entities/user.entity.js';
import { UsersService, type LockoutState, type LoginState } from '../users/users.service.js';
import { AppConfig } from '../config/app-config.js';
import { AccountLock } from '../passwords/account-lock.js';
import { EmailVerificationService } from '../account/email-verification.service.js';
import { FailedLogins } from '../passwords/failed-logins.js';
import { AuthService } from './auth.service.js';
import { PasswordHasher } from '../passwords/password-hasher.js';

const NOW = new Date('2026-01-01T12:00:00.000Z');
const MINUTE_MS = 60_000;
const at = (ms: number): Date => new Date(NOW.getTime() + ms);
const ORIGIN = originAt('203.0.113.7');
const FAMILY_ID = '9b2f6a3e-0c1d-4e5f-8a7b-6c5d4e3f2a1b';
const PASSWORD = 'S3cure!pass';
const EMAIL = 'alice@example.com';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Stands in for the transaction's EntityManager; only its identity matters. */
const MANAGER = { dummy: 'manager' } as unknown as EntityManager;

/** Fast and transparent: `h:<password>` is the hash; `legacy:<password>` needs a rehash. */
class FakePasswordHasher {
  readonly calls: string[] = [];

  hash(password: string): Promise<string> {
    this.calls.push(`hash ${password}`);
    return Promise.resolve(`h:${password}`);
  }

  verify(password: string, stored: string): Promise<boolean> {
    this.calls.push(`verify ${password} ${stored}`);
    return Promise.resolve(stored === `h:${password}` || stored === `legacy:${password}`);
  }

  verifyAgainstDummy(password: string): Promise<void> {
    this.calls.push(`dummy ${password}`);
    return Promise.resolve();
  }

  needsRehash(stored: string): boolean {
    return stored.startsWith('legacy:');
  }
}

/** No account here has a second factor: the login's precondition always holds. */
const NO_FACTOR: Precondition = {
  kind: 'without_factor',
  sql: () => 'TRUE',
  values: [],
  holds: () => Promise.resolve(true),
};

/** Mail is off: registration queues no verification mail. */
const NO_MAIL = {
  sendsOnRegistration: false,
  sendOnRegistration: () => Promise.resolve(false),
  registrationMailQueued: () => undefined,
  remind: () => Promise.resolve(),
};

/** A verify that only answers when the test says so, to observe overlapping logins. */
class GatedPasswordHasher extends FakePasswordHasher {
  active = 0;
  maxActive = 0;
  private readonly pending: Array<(result: boolean) => void> = [];

  get waiting(): number {
    return this.pending.length;
  }

  override verify(password: string, stored: string): Promise<boolean> {
    this.calls.push(`verify ${password} ${stored}`);
    this.active += 1;
    this.maxActive = Math.max(this.maxActive, this.active);
    return new Promise<boolean>((resolve) => {
      this.pending.push((result) => {
        this.active -= 1;
        resolve(result);
      });
    });
  }

  answerNext(result: boolean): void {
    const next = this.pending.shift();
    if (next === undefined) {
      throw new Error('no verification is waiting');
    }
    next(result);
  }
}

/** An in-memory user table that applies what the service writes. */
class FakeUsersService {
  /** The real loop, over this fake's reads. */
  readonly retryOnLoginStateChange = UsersService.prototype.retryOnLoginStateChange;
  readonly users = new Map<string, User>();
  readonly lookups: string[] = [];
  readonly inserted: Array<{ user: User; manager: EntityManager }> = [];
  readonly updates: Array<{ id: string; state: LoginState; manager?: EntityManager }> = [];
  insertError: Error | undefined;

  add(user: User): void {
    this.users.set(user.email, structuredClone(user));
  }

  stored(email: string): User | undefined {
    return this.users.get(email);
  }

  findByEmail(email: string): Promise<User | null> {
    this.lookups.push(email);
    const user = this.users.get(email);
    return Promise.resolve(user === undefined ? null : structuredClone(user));
  }

  insert(user: User, manager: EntityManager): Promise<void> {
    if (this.insertError !== undefined) {
      return Promise.reject(this.insertError);
    }
    this.inserted.push({ user: structuredClone(user), manager });
    this.users.set(user.email, structuredClone(user));
    return Promise.resolve();
  }

  insertWrite(user: User): GuardedWrite {
    return {
      kind: 'registration',
      sql: () => '',
      values: [],
      within: async (manager) => {
        await this.insert(user, manager);
        return true;
      },
      translate: (error) => error,
    };
  }

  loginStateWrite(id: string, seen: LockoutState, next: LoginState): GuardedWrite {
    return {
      kind: 'login',
      sql: () => '',
      values: [],
      within: (manager) => this.replaceLoginState(id, seen, next, manager),
      translate: (error) => error,
    };
  }

  /** Runs once before the next compare-and-set, as another instance writing meanwhile would. */
  interleave: ((user: User) => void) | undefined;

  findById(id: string): Promise<User | null> {
    const user = [...this.users.values()].find((candidate) => candidate.id === id);
    return Promise.resolve(user === undefined ? null : structuredClone(user));
  }

  replaceLoginState(
    id: string,
    seen: LockoutState,
    state: LoginState,
    manager?: EntityManager,
  ): Promise<boolean> {
    const user = [...this.users.values()].find((candidate) => candidate.id === id);
    if (user !== undefined && this.interleave !== undefined) {
      this.interleave(user);
      this.interleave = undefined;
    }
    const unchanged =
      user !== undefined &&
      user.failedLoginAttempts === seen.failedLoginAttempts &&
      (user.lockoutEnd?.getTime() ?? null) === (seen.lockoutEnd?.getTime() ?? null);
    if (!unchanged) {
      return Promise.resolve(false);
    }
    this.updates.push(manager === undefined ? { id, state } : { id, state, manager });
    Object.assign(user, state);
    return Promise.resolve(true);
  }
}

/**
 * Starts sessions as TokensService.start does on its transaction path: the account's write, then
 * (if it matched) the session and the event, in one transaction of the fake unit of work.
 */
class FakeTokensService {
  readonly issued: Array<{ user: User; origin: RequestOrigin; manager: EntityManager }> = [];
  events: AuthEvents | undefined;

  constructor(private readonly unitOfWork: FakeUnitOfWork) {}

  start(
    user: User,
    origin: RequestOrigin,
    start: SessionStart,
  ): Promise<IssuedSession | 'changed' | 'refused'> {
    return this.unitOfWork.transaction(async (manager) => {
      if (start.requires !== undefined && !(await start.requires.holds(manager))) {
        return 'refused';
      }
      if (!(await start.account.within(manager))) {
        return 'changed';
      }
      this.issued.push({ user: structuredClone(user), origin, manager });
      await this.events?.record(manager, start.event(FAMILY_ID), origin);
      await start.alongside?.(manager);
      const response: AuthResponseDto = {
        accessToken: `access-for-${user.id}`,
        refreshToken: `refresh-for-${user.id}`,
        accessTokenExpiry: '2026-01-01T12:15:00.000Z',
        user: UserResponseDto.from(user),
      };
      return { response, familyId: FAMILY_ID };
    });
  }
}

class FakeUnitOfWork {
  transactions = 0;
  runs = 0;
  /** How many transactions are running right now. */
  open = 0;

  async transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    this.transactions += 1;
    this.open += 1;
    try {
      return await work(MANAGER);
    } finally {
      this.open -= 1;
    }
  }

  async run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    this.runs += 1;
    return work(MANAGER);
  }
}

/** The account these tests act on; the rest of it comes from the shared factory. */
const ALICE: Partial<User> = {
  id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
  username: 'alice',
  email: EMAIL,
  passwordHash: `h:${PASSWORD}`,
};

const buildAlice = (overrides: Partial<User> = {}): User => buildUser({ ...ALICE, ...overrides });

/** Services throw domain errors only; the filter alone knows HTTP. */
async function expectDomainError(
  promise: Promise<unknown>,
  kind: typeof UnauthorizedError | typeof ConflictError,
  message: string,
): Promise<void> {
  const error = await errorOf(promise);
  expect(error).toBeInstanceOf(kind);
  expect(error).not.toBeInstanceOf(HttpException);
  expect(error.message).toBe(message);
}

/** Lets every queued promise job run. */
async function flush(): Promise<void> {
  for (let i = 0; i < 20; i += 1) {
    await Promise.resolve();
  }
}

describe(AuthService.name, () => {
  let users: FakeUsersService;
  let tokens: FakeTokensService;
  let hasher: FakePasswordHasher;
  let unitOfWork: FakeUnitOfWork;
  let logs: Array<{ level: 'log' | 'warn'; text: string }>;
  let events: AuthEvent[];
  let sut: AuthService;

  async function build(passwordHasher: FakePasswordHasher): Promise<AuthService> {
    const moduleRef = await Test.createTestingModule({
      providers: [
        AuthService,
        AccountLock,
        FailedLogins,
        { provide: EmailVerificationService, useValue: NO_MAIL },
        { provide: AppConfig, useValue: { accountFlows: { requireVerifiedEmail: false } } },
        { provide: UsersService, useValue: users },
        { provide: TokensService, useValue: tokens },
        { provide: PasswordHasher, useValue: passwordHasher },
        { provide: UnitOfWork, useValue: unitOfWork },
        { provide: Clock, useValue: new FakeClock(NOW) },
        RandomSource,
        // No account here has a second factor (test/two-factor.e2e-spec.ts covers those).
        {
          provide: TotpFactors,
          useValue: {
            activeFactorOf: () => Promise.resolve(null),
            noConfirmedFactor: (): Precondition => NO_FACTOR,
          },
        },
        { provide: AuthEvents, useClass: RecordingAuthEvents },
        // Passkeys are off: the login's `passkey` field is ignored.
        { provide: Passkeys, useValue: { isEnabled: false } },
        SecondFactorCheck,
      ],
    }).compile();
    logs.length = 0;
    events = [];
    tokens.events = moduleRef.get(AuthEvents);
    moduleRef.get(AuthEvents).subscribe((record) => {
      expect(record.origin).toBe(ORIGIN);
      events.push(record.event);
    });
    return moduleRef.get(AuthService);
  }

  beforeEach(async () => {
    users = new FakeUsersService();
    hasher = new FakePasswordHasher();
    unitOfWork = new FakeUnitOfWork();
    tokens = new FakeTokensService(unitOfWork);
    logs = [];
    jest.spyOn(Logger.prototype, 'log').mockImplementation((message: unknown) => {
      logs.push({ level: 'log', text: String(message) });
    });
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => {
      logs.push({ level: 'warn', text: String(message) });
    });
    sut = await build(hasher);
  });

  afterEach(() => {
    jest.restoreAllMocks();
  });

  describe('register', () => {
    const request = { username: 'alice', email: EMAIL, password: PASSWORD };

    it('should create the user with a hashed password and issue tokens in one transaction', async () => {
      const response = await sut.register(request, ORIGIN);

      expect(users.inserted).toHaveLength(1);
      const [{ user, manager }] = users.inserted;
      expect(user).toEqual({
        id: expect.stringMatching(UUID) as unknown,
        username: 'alice',
        email: EMAIL,
        passwordHash: `h:${PASSWORD}`,
        failedLoginAttempts: 0,
        lockoutEnd: null,
        isActive: true,
        createdAt: NOW,
        lastLoginAt: null,
        emailVerifiedAt: null,
      });
      expect(manager).toBe(MANAGER);
      expect(unitOfWork.transactions).toBe(1);
      expect(tokens.issued).toEqual([{ user, origin: ORIGIN, manager: MANAGER }]);
      expect(response).toEqual({
        accessToken: `access-for-${user.id}`,
        refreshToken: `refresh-for-${user.id}`,
        accessTokenExpiry: '2026-01-01T12:15:00.000Z',
        user: {
          id: user.id,
          username: 'alice',
          email: EMAIL,
          createdAt: '2026-01-01T12:00:00.000Z',
        },
      });
      expect(response).not.toHaveProperty('user.passwordHash');
    });

    it('should hash the password before opening the transaction', async () => {
      let openWhileHashing = -1;
      const hash = hasher.hash.bind(hasher);
      jest.spyOn(hasher, 'hash').mockImplementation((password: string) => {
        openWhileHashing = unitOfWork.open;
        return hash(password);
      });

      await sut.register(request, ORIGIN);

      expect(openWhileHashing).toBe(0);
      expect(unitOfWork.transactions).toBe(1);
    });

    it('should give every user a new id', async () => {
      await sut.register(request, ORIGIN);
      await sut.register({ ...request, email: 'bob@example.com' }, ORIGIN);

      expect(users.inserted[0].user.id).not.toBe(users.inserted[1].user.id);
    });

    it.each([
      ['surrounding spaces', '  alice@example.com  ', 'alice@example.com'],
      ['upper case', 'Alice@Example.COM', 'alice@example.com'],
      // "E" + combining acute accent (NFD) becomes the single code point "é" (NFC).
      ['a decomposed accent', 'Jose\u0301@Example.com', 'jos\u00e9@example.com'],
      ['all of them', ' JOSE\u0301@EXAMPLE.COM\t', 'jos\u00e9@example.com'],
    ])(
      'should normalise an e-mail with %s before checking and storing it',
      async (_l, email, expected) => {
        await sut.register({ ...request, email }, ORIGIN);

        expect(users.lookups).toEqual([expected]);
        expect(users.inserted[0].user.email).toBe(expected);
      },
    );

    it('should hash the password exactly as given, untrimmed', async () => {
      await sut.register({ ...request, password: ' S3cure!pass ' }, ORIGIN);

      expect(hasher.calls).toEqual(['hash  S3cure!pass ']);
      expect(users.inserted[0].user.passwordHash).toBe('h: S3cure!pass ');
    });

    it('should refuse a taken e-mail with a ConflictError before hashing anything', async () => {
      users.add(buildAlice({ email: EMAIL }));

      await expectDomainError(
        sut.register({ ...request, email: ' ALICE@example.com ' }, ORIGIN),
        ConflictError,
        'Ya existe una cuenta con ese email.',
      );

      expect(hasher.calls).toEqual([]);
      expect(users.inserted).toEqual([]);
      expect(tokens.issued).toEqual([]);
    });

    it('should pass on the ConflictError of an e-mail taken between check and insert', async () => {
      users.insertError = new ConflictError('Ya existe una cuenta con ese email.');

      await expectDomainError(
        sut.register(request, ORIGIN),
        ConflictError,
        'Ya existe una cuenta con ese email.',
      );
      expect(tokens.issued).toEqual([]);
    });

    it('should log the registration without the password or its hash', async () => {
      await sut.register(request, ORIGIN);

      expect(logs.filter((l) => l.level === 'log')).toHaveLength(1);
      expect(JSON.stringify(logs)).not.toContain(PASSWORD);
    });
  });

  describe('login', () => {
    const request = { email: EMAIL, password: PASSWORD };

    it('should look the user up by the normalised e-mail', async () => {
      users.add(buildAlice());

      await sut.login({ email: '  Alice@EXAMPLE.com ', password: PASSWORD }, ORIGIN);

      expect(users.lookups).toEqual([EMAIL]);
    });

    it('should answer an unknown e-mail like a wrong password, after a dummy verification', async () => {
      await expectDomainError(
        sut.login({ email: 'nobody@example.com', password: PASSWORD }, ORIGIN),
        UnauthorizedError,
        'Credenciales inválidas.',
      );

      expect(hasher.calls).toEqual([`dummy ${PASSWORD}`]);
      expect(users.updates).toEqual([]);
      expect(tokens.issued).toEqual([]);
    });

    it.each([
      ['with the right password', PASSWORD],
      ['with a wrong password', 'wrong'],
    ])(
      'should refuse a deactivated account %s without checking the password',
      async (_l, password) => {
        users.add(buildAlice({ isActive: false }));

        await expectDomainError(
          sut.login({ email: EMAIL, password }, ORIGIN),
          UnauthorizedError,
          'Cuenta desactivada.',
        );

        expect(hasher.calls).toEqual([]);
        expect(users.updates).toEqual([]);
        expect(tokens.issued).toEqual([]);
      },
    );

    it('should report a deactivated account before a lockout', async () => {
      users.add(buildAlice({ isActive: false, failedLoginAttempts: 5, lockoutEnd: at(MINUTE_MS) }));

      await expectDomainError(sut.login(request, ORIGIN), UnauthorizedError, 'Cuenta desactivada.');
    });

    it.each([
      [15 * MINUTE_MS, 16],
      [10 * MINUTE_MS, 11],
      [10 * MINUTE_MS - 1, 10],
      [MINUTE_MS, 2],
      [30_000, 1],
      [1, 1],
    ])(
      'should refuse a locked account (%i ms left) saying %i minute(s), without checking the password',
      async (left, minutes) => {
        users.add(buildAlice({ failedLoginAttempts: 5, lockoutEnd: at(left) }));

        await expectDomainError(
          sut.login(request, ORIGIN),
          UnauthorizedError,
          `Cuenta bloqueada temporalmente. Intenta en ${minutes} minuto(s).`,
        );

        expect(hasher.calls).toEqual([]);
        expect(users.updates).toEqual([]);
        expect(users.stored(EMAIL)).toMatchObject({ failedLoginAttempts: 5, lockoutEnd: at(left) });
        expect(tokens.issued).toEqual([]);
      },
    );

    it('should count a wrong password and refuse it with the generic message', async () => {
      users.add(buildAlice({ failedLoginAttempts: 2 }));

      await expectDomainError(
        sut.login({ email: EMAIL, password: 'wrong' }, ORIGIN),
        UnauthorizedError,
        'Credenciales inválidas.',
      );

      expect(hasher.calls).toEqual([`verify wrong h:${PASSWORD}`]);
      expect(users.updates).toEqual([
        {
          id: buildAlice().id,
          state: { failedLoginAttempts: 3, lockoutEnd: null },
          manager: MANAGER,
        },
      ]);
      expect(tokens.issued).toEqual([]);
      expect(logs.filter((l) => l.level === 'warn')).toEqual([]);
    });

    it('should lock the account for 15 minutes on the fifth wrong password, and warn', async () => {
      users.add(buildAlice({ failedLoginAttempts: 4 }));

      await expectDomainError(
        sut.login({ email: EMAIL, password: 'wrong' }, ORIGIN),
        UnauthorizedError,
        'Credenciales inválidas.',
      );

      expect(users.updates).toEqual([
        {
          id: buildAlice().id,
          state: { failedLoginAttempts: 5, lockoutEnd: at(15 * MINUTE_MS) },
          manager: MANAGER,
        },
      ]);
      const warnings = logs.filter((l) => l.level === 'warn');
      expect(warnings).toHaveLength(1);
      expect(warnings[0].text).toContain(buildAlice().id);
      expect(JSON.stringify(logs)).not.toContain('wrong');
    });

    it.each([
      ['just elapsed', 0],
      ['elapsed long ago', -24 * 60 * MINUTE_MS],
    ])('should lock again on a wrong password after a lockout that has %s', async (_l, offset) => {
      users.add(buildAlice({ failedLoginAttempts: 5, lockoutEnd: at(offset) }));

      await expectDomainError(
        sut.login({ email: EMAIL, password: 'wrong' }, ORIGIN),
        UnauthorizedError,
        'Credenciales inválidas.',
      );

      expect(hasher.calls).toEqual([`verify wrong h:${PASSWORD}`]);
      expect(users.updates).toEqual([
        {
          id: buildAlice().id,
          state: { failedLoginAttempts: 6, lockoutEnd: at(15 * MINUTE_MS) },
          manager: MANAGER,
        },
      ]);
    });

    it('should lock out after five wrong passwords in a row and then refuse even the right one', async () => {
      users.add(buildAlice());

      for (let attempt = 1; attempt <= 5; attempt += 1) {
        await expectDomainError(
          sut.login({ email: EMAIL, password: 'wrong' }, ORIGIN),
          UnauthorizedError,
          'Credenciales inválidas.',
        );
      }
      await expectDomainError(
        sut.login(request, ORIGIN),
        UnauthorizedError,
        'Cuenta bloqueada temporalmente. Intenta en 16 minuto(s).',
      );

      expect(users.updates.map((u) => u.state.failedLoginAttempts)).toEqual([1, 2, 3, 4, 5]);
      expect(users.stored(EMAIL)?.lockoutEnd).toEqual(at(15 * MINUTE_MS));
      expect(tokens.issued).toEqual([]);
    });

    it('should reset the lockout state, set lastLoginAt and issue tokens on success', async () => {
      const user = buildAlice({ failedLoginAttempts: 7, lockoutEnd: at(-1) });
      users.add(user);

      const response = await sut.login(request, ORIGIN);

      expect(users.updates).toEqual([
        {
          id: user.id,
          state: {
            failedLoginAttempts: 0,
            lockoutEnd: null,
            lastLoginAt: NOW,
            passwordHash: `h:${PASSWORD}`,
          },
          manager: MANAGER,
        },
      ]);
      expect(unitOfWork.transactions).toBe(1);
      expect(tokens.issued).toEqual([{ user, origin: ORIGIN, manager: MANAGER }]);
      expect(response).toEqual({
        accessToken: `access-for-${user.id}`,
        refreshToken: `refresh-for-${user.id}`,
        accessTokenExpiry: '2026-01-01T12:15:00.000Z',
        user: UserResponseDto.from(user),
      });
      expect(hasher.calls).toEqual([`verify ${PASSWORD} h:${PASSWORD}`]);
      expect(logs.filter((l) => l.level === 'log')).toHaveLength(1);
      expect(JSON.stringify(logs)).not.toContain(PASSWORD);
    });

    it('should verify and rehash outside the transaction', async () => {
      users.add(buildAlice({ passwordHash: `legacy:${PASSWORD}` }));
      const openDuring: string[] = [];
      const verify = hasher.verify.bind(hasher);
      const hash = hasher.hash.bind(hasher);
      jest.spyOn(hasher, 'verify').mockImplementation((password: string, stored: string) => {
        openDuring.push(`verify with ${unitOfWork.open} open`);
        return verify(password, stored);
      });
      jest.spyOn(hasher, 'hash').mockImplementation((password: string) => {
        openDuring.push(`hash with ${unitOfWork.open} open`);
        return hash(password);
      });

      await sut.login(request, ORIGIN);

      expect(openDuring).toEqual(['verify with 0 open', 'hash with 0 open']);
      expect(unitOfWork.transactions).toBe(1);
    });

    it('should upgrade a hash that needs a rehash, storing the new one', async () => {
      users.add(buildAlice({ passwordHash: `legacy:${PASSWORD}` }));

      await sut.login(request, ORIGIN);

      expect(hasher.calls).toEqual([`verify ${PASSWORD} legacy:${PASSWORD}`, `hash ${PASSWORD}`]);
      expect(users.updates[0].state.passwordHash).toBe(`h:${PASSWORD}`);
      expect(users.stored(EMAIL)?.passwordHash).toBe(`h:${PASSWORD}`);
    });

    it('should keep a current hash as it is', async () => {
      users.add(buildAlice());

      await sut.login(request, ORIGIN);

      expect(hasher.calls.filter((call) => call.startsWith('hash'))).toEqual([]);
      expect(users.updates[0].state.passwordHash).toBe(`h:${PASSWORD}`);
    });

    it('should not rehash after a wrong password', async () => {
      users.add(buildAlice({ passwordHash: `legacy:${PASSWORD}` }));

      await expect(sut.login({ email: EMAIL, password: 'wrong' }, ORIGIN)).rejects.toThrow(
        'Credenciales inválidas.',
      );

      expect(hasher.calls.filter((call) => call.startsWith('hash'))).toEqual([]);
      expect(users.stored(EMAIL)?.passwordHash).toBe(`legacy:${PASSWORD}`);
    });

    it('should check the parallel logins of one account one at a time', async () => {
      const gated = new GatedPasswordHasher();
      sut = await build(gated);
      users.add(buildAlice());

      const attempts = [
        sut.login({ email: EMAIL, password: 'wrong-1' }, ORIGIN),
        sut.login({ email: ' ALICE@example.com', password: 'wrong-2' }, ORIGIN),
        sut.login({ email: EMAIL, password: 'wrong-3' }, ORIGIN),
      ].map((attempt) => errorOf(attempt));

      for (let i = 0; i < 3; i += 1) {
        await flush();
        expect(gated.waiting).toBe(1);
        gated.answerNext(false);
      }
      const errors = await Promise.all(attempts);

      expect(gated.maxActive).toBe(1);
      expect(errors.map((e) => e.message)).toEqual(Array(3).fill('Credenciales inválidas.'));
      // Each attempt saw the counter the previous one wrote.
      expect(users.updates.map((u) => u.state.failedLoginAttempts)).toEqual([1, 2, 3]);
    });

    it('should refuse queued guesses once the attempt before them locked the account', async () => {
      const gated = new GatedPasswordHasher();
      sut = await build(gated);
      users.add(buildAlice({ failedLoginAttempts: 4 }));

      const attempts = [PASSWORD.slice(1), PASSWORD, 'wrong-3'].map((password) =>
        errorOf(sut.login({ email: EMAIL, password }, ORIGIN)),
      );
      await flush();
      expect(gated.waiting).toBe(1);
      gated.answerNext(false);
      const errors = await Promise.all(attempts);

      expect(errors.map((e) => e.message)).toEqual([
        'Credenciales inválidas.',
        'Cuenta bloqueada temporalmente. Intenta en 16 minuto(s).',
        'Cuenta bloqueada temporalmente. Intenta en 16 minuto(s).',
      ]);
      expect(gated.calls).toHaveLength(1);
      expect(tokens.issued).toEqual([]);
    });

    describe('when another instance writes the account while the password is checked', () => {
      it('should answer with the lockout that instance started, hashing once', async () => {
        users.add(buildAlice({ failedLoginAttempts: 4 }));
        users.interleave = (user) => {
          user.failedLoginAttempts = 5;
          user.lockoutEnd = new Date(NOW.getTime() + 15 * 60_000);
        };

        const error = await errorOf(sut.login({ email: EMAIL, password: PASSWORD }, ORIGIN));

        expect(error.message).toBe('Cuenta bloqueada temporalmente. Intenta en 16 minuto(s).');
        expect(hasher.calls.filter((call) => call.startsWith('verify'))).toHaveLength(1);
        expect(tokens.issued).toEqual([]);
      });

      it('should count a wrong password on top of the failure that instance counted', async () => {
        users.add(buildAlice({ failedLoginAttempts: 2 }));
        users.interleave = (user) => {
          user.failedLoginAttempts = 3;
        };

        await expect(sut.login({ email: EMAIL, password: 'wrong' }, ORIGIN)).rejects.toThrow(
          'Credenciales inválidas.',
        );

        expect(users.stored(EMAIL)?.failedLoginAttempts).toBe(4);
      });

      it('should still log in when that instance only counted a failure', async () => {
        users.add(buildAlice({ failedLoginAttempts: 1 }));
        users.interleave = (user) => {
          user.failedLoginAttempts = 2;
        };

        await sut.login({ email: EMAIL, password: PASSWORD }, ORIGIN);

        expect(users.stored(EMAIL)).toMatchObject({ failedLoginAttempts: 0, lastLoginAt: NOW });
        expect(tokens.issued).toHaveLength(1);
      });
    });

    it('should not serialise logins of different accounts', async () => {
      const gated = new GatedPasswordHasher();
      sut = await build(gated);
      users.add(buildAlice());
      users.add(
        buildAlice({ id: '9b2d6f7e-1c1a-4c55-8f3e-2f7b0d1e6a11', email: 'bob@example.com' }),
      );

      const alice = errorOf(sut.login({ email: EMAIL, password: 'wrong' }, ORIGIN));
      const bob = errorOf(sut.login({ email: 'bob@example.com', password: 'wrong' }, ORIGIN));
      await flush();

      expect(gated.maxActive).toBe(2);
      gated.answerNext(false);
      gated.answerNext(false);
      await Promise.all([alice, bob]);
    });
  });
  describe('events', () => {
    const user = buildAlice();
    const login = (password: string): Promise<unknown> =>
      sut.login({ email: ' Alice@Example.com', password }, ORIGIN).catch(() => undefined);

    it('should tell a registration with the session it started', async () => {
      const response = await sut.register(
        { username: 'alice', email: EMAIL, password: PASSWORD },
        ORIGIN,
      );

      expect(events).toEqual([
        { type: 'registered', userId: response.user.id, familyId: FAMILY_ID },
      ]);
    });

    it('should tell a successful login with the session it started', async () => {
      users.add(user);

      await login(PASSWORD);

      expect(events).toEqual([{ type: 'login_succeeded', userId: user.id, familyId: FAMILY_ID }]);
    });

    it.each([
      ['unknown_email', {}, null],
      ['deactivated', { isActive: false }, user.id],
      ['locked', { failedLoginAttempts: 5, lockoutEnd: at(MINUTE_MS) }, user.id],
      ['bad_password', {}, user.id],
    ] as const)(
      'should tell a refused login with its reason: %s',
      async (reason, state, userId) => {
        if (reason !== 'unknown_email') {
          users.add(buildAlice(state));
        }

        await login(reason === 'bad_password' ? 'wrong' : PASSWORD);

        expect(events).toEqual([{ type: 'login_failed', userId, email: EMAIL, reason }]);
      },
    );

    it('should tell the lockout that a failure starts, before the failure itself', async () => {
      users.add(buildAlice({ failedLoginAttempts: 4 }));

      await login('wrong');

      expect(events).toEqual([
        {
          type: 'lockout_started',
          userId: user.id,
          failedAttempts: 5,
          lockedUntil: at(15 * MINUTE_MS),
        },
        { type: 'login_failed', userId: user.id, email: EMAIL, reason: 'bad_password' },
      ]);
    });
  });
});
