import { HttpException } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { EntityManager } from 'typeorm';
import { buildUser } from '../../test/factories/user.factory.js';
import { FakeClock } from '../../test/utils/fake-clock.js';
import { SequenceRandomSource } from '../../test/utils/fake-random.js';
import { originAt } from '../../test/utils/origin.js';
import { RecordingAuthEvents } from '../../test/utils/recording-auth-events.js';
import { errorOf } from '../../test/utils/rejection.js';
import { FailedLogins } from '../passwords/failed-logins.js';
import { NotFoundError, UnauthorizedError } from '../common/errors/domain-errors.js';
import { RandomSource } from '../common/random/random-source.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/app-config.js';
import type { GuardedWrite, Precondition } from '../database/guarded-write.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { AuthEvent } from '../events/auth-event.js';
import { AuthEvents } from '../events/auth-events.js';
import type { MailKind } from '../mail/entities/outbox-mail.entity.js';
import { MailOutbox } from '../mail/mail-outbox.js';
import type { MailPreparer, PreparedMail } from '../mail/mail-sender.js';
import { TotpFactors } from '../two-factor/totp-factors.service.js';
import type { AuthMethod } from '../tokens/auth-methods.js';
import { TokensService, type IssuedSession, type SessionStart } from '../tokens/tokens.service.js';
import { UserResponseDto } from '../users/dto/user-response.dto.js';
import type { User } from '../users/entities/user.entity.js';
import { UsersService, type LockoutState, type LoginState } from '../users/users.service.js';
import { EmailCodeRepository } from './email-code.repository.js';
import { EmailCodeSecrets } from './email-code-secrets.js';
import { EmailCodesService } from './email-codes.service.js';
import type { EmailCode } from './entities/email-code.entity.js';

const NOW = new Date('2026-01-01T12:00:00.000Z');
const SECOND_MS = 1000;
const MINUTE_MS = 60 * SECOND_MS;
const ORIGIN = originAt('203.0.113.27');
const MANAGER = { dummy: 'manager' } as unknown as EntityManager;
const INVALID = 'Código inválido o expirado.';

const settings = (enabled = true) =>
  ({
    jwt: { secret: 'unit-test-secret-0123456789abcdef-XYZ' },
    mail: { minIntervalSeconds: 60 },
    emailCode: { enabled, codeLength: 6, lifetimeMinutes: 10, maxAttempts: 3 },
  }) as AppConfig;

/** Accounts by address, with the lockout compare-and-set the real repository does. */
class FakeUsers {
  readonly users = new Map<string, User>();
  readonly verified: string[] = [];

  findByEmail(email: string): Promise<User | null> {
    const user = this.users.get(email);
    return Promise.resolve(user === undefined ? null : structuredClone(user));
  }

  findById(id: string): Promise<User | null> {
    const user = [...this.users.values()].find((candidate) => candidate.id === id);
    return Promise.resolve(user === undefined ? null : structuredClone(user));
  }

  replaceLoginState(id: string, seen: LockoutState, next: LoginState): Promise<boolean> {
    const user = [...this.users.values()].find((candidate) => candidate.id === id);
    const unchanged =
      user !== undefined &&
      user.failedLoginAttempts === seen.failedLoginAttempts &&
      (user.lockoutEnd?.getTime() ?? null) === (seen.lockoutEnd?.getTime() ?? null);
    if (unchanged) {
      Object.assign(user, next);
    }
    return Promise.resolve(unchanged);
  }

  loginStateWrite(id: string, seen: LockoutState, next: LoginState): GuardedWrite {
    return {
      kind: 'login',
      sql: () => '',
      values: [],
      within: () => this.replaceLoginState(id, seen, next),
      translate: (error) => error,
    };
  }

  markEmailVerified(id: string): Promise<boolean> {
    this.verified.push(id);
    return Promise.resolve(true);
  }
}

/** One code per account, with the repository's conditional writes. */
class FakeCodes {
  readonly rows = new Map<string, EmailCode>();
  /** Runs once before the next conditional write, as another instance writing meanwhile would. */
  interleave: (() => void) | undefined;

  findOf(userId: string): Promise<EmailCode | null> {
    const row = this.rows.get(userId);
    return Promise.resolve(row === undefined ? null : { ...row });
  }

  findByTokenHash(tokenHash: string): Promise<EmailCode | null> {
    const row = [...this.rows.values()].find((candidate) => candidate.tokenHash === tokenHash);
    return Promise.resolve(row === undefined ? null : { ...row });
  }

  replace(_m: EntityManager, code: EmailCode): Promise<void> {
    this.rows.set(code.userId, { ...code });
    return Promise.resolve();
  }

  countWrongTry(_m: EntityManager, seen: EmailCode, maxAttempts: number): Promise<boolean> {
    const row = this.current(seen);
    if (row === undefined) {
      return Promise.resolve(false);
    }
    if (seen.attempts + 1 >= maxAttempts) {
      this.rows.delete(row.userId);
    } else {
      row.attempts += 1;
    }
    return Promise.resolve(true);
  }

  consume(_m: EntityManager, seen: EmailCode): Promise<boolean> {
    const row = this.current(seen);
    if (row !== undefined) {
      this.rows.delete(row.userId);
    }
    return Promise.resolve(row !== undefined);
  }

  private current(seen: EmailCode): EmailCode | undefined {
    this.interleave?.();
    this.interleave = undefined;
    const row = this.rows.get(seen.userId);
    return row?.id === seen.id && row.attempts === seen.attempts ? row : undefined;
  }
}

/** Starts sessions as TokensService.start does on its transaction path. */
class FakeTokens {
  readonly started: Array<{ user: User; methods: readonly AuthMethod[] }> = [];
  events: AuthEvents | undefined;

  async start(
    user: User,
    origin: RequestOrigin,
    start: SessionStart,
  ): Promise<IssuedSession | 'changed' | 'refused'> {
    if (start.requires !== undefined && !(await start.requires.holds(MANAGER))) {
      return 'refused';
    }
    if (!(await start.account.within(MANAGER))) {
      return 'changed';
    }
    await this.events?.record(MANAGER, start.event('family-1'), origin);
    await start.alongside?.(MANAGER);
    this.started.push({ user, methods: start.authMethods });
    return {
      familyId: 'family-1',
      response: {
        accessToken: 'access',
        refreshToken: 'refresh',
        accessTokenExpiry: '2026-01-01T12:15:00.000Z',
        user: UserResponseDto.from(user),
      },
    };
  }
}

/** An account has a factor or not; its TOTP is `111111`. */
class FakeTotp {
  readonly withFactor = new Set<string>();

  noConfirmedFactor(userId: string): Precondition {
    return {
      kind: 'without_factor',
      sql: () => 'TRUE',
      values: [],
      holds: () => Promise.resolve(!this.withFactor.has(userId)),
    };
  }

  activeFactorOf(userId: string): Promise<{ userId: string } | null> {
    return Promise.resolve(this.withFactor.has(userId) ? { userId } : null);
  }

  redeem(_factor: unknown, code: string): Promise<'totp' | null> {
    return Promise.resolve(code === '111111' ? 'totp' : null);
  }
}

/** The outbox as the service sees it: the preparer it registers, and the mails it withdraws. */
class FakeOutbox {
  preparer: MailPreparer | undefined;
  readonly requested: string[] = [];
  readonly cancelled: string[] = [];

  registerPreparer(_kind: MailKind, preparer: MailPreparer): void {
    this.preparer = preparer;
  }

  request(_kind: MailKind, recipient: string): Promise<void> {
    this.requested.push(recipient);
    return Promise.resolve();
  }

  cancelOpen(_m: EntityManager, userId: string): Promise<void> {
    this.cancelled.push(userId);
    return Promise.resolve();
  }
}

/** A unit of work whose transactions roll the fake accounts back when they fail. */
function fakeUnitOfWork(users: FakeUsers) {
  return {
    transaction: async <T>(work: (m: EntityManager) => Promise<T>): Promise<T> => {
      const before = structuredClone(users.users);
      try {
        return await work(MANAGER);
      } catch (error: unknown) {
        users.users.clear();
        before.forEach((user, email) => users.users.set(email, user));
        throw error;
      }
    },
    run: <T>(work: (m: EntityManager) => Promise<T>) => work(MANAGER),
    lock: () => Promise.resolve(),
  };
}

describe(EmailCodesService.name, () => {
  let users: FakeUsers;
  let codes: FakeCodes;
  let tokens: FakeTokens;
  let totp: FakeTotp;
  let outbox: FakeOutbox;
  let clock: FakeClock;
  let events: AuthEvent[];
  let sut: EmailCodesService;

  async function build(config: AppConfig): Promise<EmailCodesService> {
    const moduleRef = await Test.createTestingModule({
      providers: [
        EmailCodesService,
        EmailCodeSecrets,
        FailedLogins,
        { provide: AppConfig, useValue: config },
        { provide: UsersService, useValue: users },
        { provide: EmailCodeRepository, useValue: codes },
        { provide: TokensService, useValue: tokens },
        { provide: TotpFactors, useValue: totp },
        { provide: MailOutbox, useValue: outbox },
        { provide: UnitOfWork, useValue: fakeUnitOfWork(users) },
        { provide: Clock, useValue: clock },
        { provide: RandomSource, useClass: SequenceRandomSource },
        { provide: AuthEvents, useClass: RecordingAuthEvents },
      ],
    }).compile();
    moduleRef.get(AuthEvents).subscribe((record) => events.push(record.event));
    tokens.events = moduleRef.get(AuthEvents);
    const service = moduleRef.get(EmailCodesService);
    service.onModuleInit();
    return service;
  }

  beforeEach(async () => {
    users = new FakeUsers();
    codes = new FakeCodes();
    tokens = new FakeTokens();
    totp = new FakeTotp();
    outbox = new FakeOutbox();
    clock = new FakeClock(NOW);
    events = [];
    sut = await build(settings());
  });

  function addUser(overrides: Partial<User> = {}): User {
    const user = buildUser({ email: 'alice@example.com', ...overrides });
    users.users.set(user.email, structuredClone(user));
    return user;
  }

  /** What the mail sender would make of a request for `email`. */
  function prepare(email: string): Promise<PreparedMail | null> {
    if (outbox.preparer === undefined) {
      throw new Error('no preparer registered');
    }
    return outbox.preparer(MANAGER, email, ORIGIN);
  }

  async function mailed(email: string): Promise<{ code: string; token: string }> {
    const mail = await prepare(email);
    if (mail?.code === undefined || mail.token === undefined) {
      throw new Error('no code was mailed');
    }
    return { code: mail.code, token: mail.token };
  }

  async function expectRefusal(
    promise: Promise<unknown>,
    kind: typeof UnauthorizedError | typeof NotFoundError,
    message: string,
  ): Promise<void> {
    const error = await errorOf(promise);
    expect(error).toBeInstanceOf(kind);
    expect(error).not.toBeInstanceOf(HttpException);
    expect(error.message).toBe(message);
  }

  const failures = () =>
    events.flatMap((event) => (event.type === 'email_code_login_failed' ? [event.reason] : []));

  describe('asking for a code', () => {
    it('should queue the request as it is, whatever the address', async () => {
      const answer = await sut.send({ email: ' Alice@Example.com' }, ORIGIN);

      expect(answer).toEqual({
        message: 'Si existe una cuenta con ese email, recibirás un código para iniciar sesión.',
      });
      expect(outbox.requested).toEqual(['alice@example.com']);
    });

    it('should write a code that lives ten minutes, and mail it with its link', async () => {
      const user = addUser();

      const mail = await prepare(user.email);

      expect(mail).toEqual({
        userId: user.id,
        recipient: user.email,
        values: { username: user.username, expiresInMinutes: 10 },
        token: expect.stringMatching(/^[\w-]{43}$/),
        code: expect.stringMatching(/^\d{6}$/),
      });
      const row = codes.rows.get(user.id);
      expect(row).toEqual(
        expect.objectContaining({
          email: user.email,
          attempts: 0,
          createdAt: NOW,
          expiresAt: new Date(NOW.getTime() + 10 * MINUTE_MS),
        }),
      );
      expect(JSON.stringify(row)).not.toContain(mail?.code);
      expect(JSON.stringify(row)).not.toContain(mail?.token);
      expect(events).toEqual([{ type: 'email_code_requested', userId: user.id }]);
    });

    it('should mail nothing for an unknown address or a deactivated account', async () => {
      addUser({ email: 'off@example.com', isActive: false });

      expect(await prepare('nobody@example.com')).toBeNull();
      expect(await prepare('off@example.com')).toBeNull();
      expect(codes.rows.size).toBe(0);
      expect(events).toEqual([]);
    });

    it('should keep the live code inside the minimum interval, and replace it after', async () => {
      const user = addUser();
      const first = await mailed(user.email);

      clock.advance(59 * SECOND_MS);
      expect(await prepare(user.email)).toBeNull();
      clock.advance(1 * SECOND_MS);
      const second = await mailed(user.email);

      expect(second.code === first.code && second.token === first.token).toBe(false);
      // Each new code withdraws the mail of the one before, if still unsent.
      expect(outbox.cancelled).toEqual([user.id, user.id]);
      await expectRefusal(sut.login({ token: first.token }, ORIGIN), UnauthorizedError, INVALID);
      expect(await sut.login({ token: second.token }, ORIGIN)).toEqual(
        expect.objectContaining({ accessToken: 'access' }),
      );
    });
  });

  describe('signing in', () => {
    it('should take the code until the last millisecond of its ten minutes, and not at the tenth', async () => {
      const user = addUser();
      const { code } = await mailed(user.email);

      clock.advance(10 * MINUTE_MS);
      await expectRefusal(
        sut.login({ email: user.email, code }, ORIGIN),
        UnauthorizedError,
        INVALID,
      );
      clock.advance(-1);
      const answer = await sut.login({ email: user.email, code }, ORIGIN);

      expect(answer.user.id).toBe(user.id);
      expect(failures()).toEqual(['expired']);
      expect(tokens.started.map((start) => start.methods)).toEqual([['email']]);
    });

    it('should count wrong codes on the code and the account, end it at the third, then count nothing', async () => {
      const user = addUser();
      const { code } = await mailed(user.email);
      const wrong = code === '000000' ? '000001' : '000000';

      for (let attempt = 0; attempt < 4; attempt += 1) {
        await expectRefusal(
          sut.login({ email: user.email, code: wrong }, ORIGIN),
          UnauthorizedError,
          INVALID,
        );
      }
      await expectRefusal(
        sut.login({ email: user.email, code }, ORIGIN),
        UnauthorizedError,
        INVALID,
      );

      expect(failures()).toEqual(['bad_code', 'bad_code', 'exhausted', 'invalid', 'invalid']);
      expect(users.users.get(user.email)?.failedLoginAttempts).toBe(3);
    });

    it('should read again, and count once, a wrong try that raced another', async () => {
      const user = addUser();
      const { code } = await mailed(user.email);
      const wrong = code === '000000' ? '000001' : '000000';
      // Another instance counts a wrong try between this one's read and its write.
      codes.interleave = () => {
        const row = codes.rows.get(user.id);
        if (row !== undefined) {
          row.attempts += 1;
        }
      };

      await expectRefusal(
        sut.login({ email: user.email, code: wrong }, ORIGIN),
        UnauthorizedError,
        INVALID,
      );

      expect(codes.rows.get(user.id)?.attempts).toBe(2);
      expect(failures()).toEqual(['bad_code']);
      expect(users.users.get(user.email)?.failedLoginAttempts).toBe(1);
    });

    it('should refuse a locked-out account before the code, counting nothing, and take it after', async () => {
      const user = addUser({
        failedLoginAttempts: 5,
        lockoutEnd: new Date(NOW.getTime() + 3 * MINUTE_MS),
      });
      const { code } = await mailed(user.email);

      await expectRefusal(
        sut.login({ email: user.email, code: '999999' }, ORIGIN),
        UnauthorizedError,
        'Cuenta bloqueada temporalmente. Intenta en 4 minuto(s).',
      );
      clock.advance(3 * MINUTE_MS);
      await sut.login({ email: user.email, code }, ORIGIN);

      const after = users.users.get(user.email);
      expect([after?.failedLoginAttempts, after?.lockoutEnd, after?.lastLoginAt]).toEqual([
        0,
        null,
        clock.now(),
      ]);
      expect(failures()).toEqual(['locked']);
    });

    it('should need the second factor, keep the mailed code until it comes, and say both in amr', async () => {
      const user = addUser({ emailVerifiedAt: NOW });
      totp.withFactor.add(user.id);
      const { token } = await mailed(user.email);

      await expectRefusal(
        sut.login({ token }, ORIGIN),
        UnauthorizedError,
        'Se requiere el código de verificación.',
      );
      await expectRefusal(
        sut.login({ token, secondFactorCode: '222222' }, ORIGIN),
        UnauthorizedError,
        'Código de verificación inválido.',
      );
      await sut.login({ token, secondFactorCode: '111111' }, ORIGIN);

      expect(failures()).toEqual(['mfa_required', 'bad_mfa_code']);
      expect(tokens.started.map((start) => start.methods)).toEqual([['email', 'otp']]);
      // A right code resets what the wrong second factor counted, as a login does.
      expect(users.users.get(user.email)?.failedLoginAttempts).toBe(0);
      expect(users.verified).toEqual([]);
    });

    it('should verify an unverified address, and issue its token as verified', async () => {
      const user = addUser({ emailVerifiedAt: null });
      const { code } = await mailed(user.email);

      await sut.login({ email: user.email, code }, ORIGIN);

      expect(users.verified).toEqual([user.id]);
      expect(tokens.started[0]?.user.emailVerifiedAt).toEqual(NOW);
      expect(events.map((event) => event.type)).toEqual([
        'email_code_requested',
        'email_code_login_succeeded',
        'email_verified',
      ]);
    });

    it('should refuse a code mailed to an address the account no longer has', async () => {
      const user = addUser();
      const { token } = await mailed(user.email);
      const stored = users.users.get(user.email);
      users.users.delete(user.email);
      users.users.set('new@example.com', { ...(stored as User), email: 'new@example.com' });

      await expectRefusal(sut.login({ token }, ORIGIN), UnauthorizedError, INVALID);
      expect(failures()).toEqual(['invalid']);
    });
  });

  describe('off', () => {
    beforeEach(async () => {
      sut = await build(settings(false));
    });

    it('should answer both routes 404, and prepare nothing asked for while it was on', async () => {
      const user = addUser();
      const disabled = 'El inicio de sesión con código por email no está activado.';

      await expectRefusal(sut.send({ email: user.email }, ORIGIN), NotFoundError, disabled);
      await expectRefusal(
        sut.login({ email: user.email, code: '123456' }, ORIGIN),
        NotFoundError,
        disabled,
      );
      expect(await prepare(user.email)).toBeNull();
      expect(outbox.requested).toEqual([]);
    });
  });
});
