import { jest } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { storedTokenView } from '../../test/factories/refresh-token.factory.js';
import { buildUser } from '../../test/factories/user.factory.js';
import { FakeClock } from '../../test/utils/fake-clock.js';
import { createInMemoryDataSource } from '../../test/utils/in-memory-database.js';
import { rejectionOf } from '../../test/utils/rejection.js';
import { UnauthorizedError } from '../common/errors/domain-errors.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { RandomSource } from '../common/random/random-source.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/app-config.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { AuditEventRepository } from '../audit/audit-event.repository.js';
import { AuditSink } from '../events/audit-sink.js';
import { DeliverySink } from '../events/delivery-sink.js';
import { WebhookDeliveryRepository } from '../webhooks/webhook-delivery.repository.js';
import { AuthEvents } from '../events/auth-events.js';
import { AccessTokenService } from '../tokens/access-token.service.js';
import { RefreshToken } from '../tokens/entities/refresh-token.entity.js';
import { Session } from '../tokens/entities/session.entity.js';
import { RefreshTokenRepository } from '../tokens/storage/refresh-token.repository.js';
import { RefreshSuccessors } from '../tokens/storage/refresh-successors.js';
import { SessionRepository } from '../tokens/storage/session.repository.js';
import { TokensService } from '../tokens/tokens.service.js';
import { User } from '../users/entities/user.entity.js';
import { UserRepository } from '../users/user.repository.js';
import { UsersService } from '../users/users.service.js';
import { SessionsService } from './sessions.service.js';

const START = new Date('2026-01-01T12:00:00.000Z');
const MINUTE_MS = 60 * 1000;
const DAY_MS = 24 * 60 * MINUTE_MS;

function origin(ip: string, userAgent: string | null): RequestOrigin {
  return { ip, userAgent, requestId: `test-${ip}` };
}

const LAPTOP = origin('203.0.113.7', 'Firefox/140.0');
const PHONE = origin('198.51.100.20', 'KeygateApp/3.1');
const TABLET = origin('192.0.2.44', null);

describe(SessionsService.name, () => {
  let dataSource: DataSource;
  let unitOfWork: UnitOfWork;
  let clock: FakeClock;
  let tokens: TokensService;
  let sut: SessionsService;

  const createUser = async (): Promise<User> => {
    const user = buildUser({ createdAt: START });
    await dataSource.manager.insert(User, user);
    return user;
  };
  /** Logs in: starts a session and returns its refresh token. */
  const logIn = async (user: User, from: RequestOrigin): Promise<string> =>
    (await unitOfWork.transaction((m) => tokens.issue(user, from, m))).response.refreshToken;
  const refresh = async (raw: string, from: RequestOrigin): Promise<string> =>
    (await tokens.refresh(raw, from)).refreshToken;
  const sessionOf = async (raw: string): Promise<string> => {
    const token = await storedTokenView(dataSource, raw);
    if (token === null) {
      throw new Error('no such token');
    }
    return token.familyId;
  };
  const everyRow = async (): Promise<unknown[]> => [
    await dataSource.manager.find(Session, { order: { id: 'ASC' } }),
    await dataSource.manager.find(RefreshToken, { order: { sessionId: 'ASC', generation: 'ASC' } }),
  ];
  /** The token as spec §2.2 tells it (test/factories/refresh-token.factory.ts). */
  const tokenOf = (raw: string) => storedTokenView(dataSource, raw);

  beforeEach(async () => {
    dataSource = await createInMemoryDataSource();
    clock = new FakeClock(START);
    const config = {
      jwt: { refreshTokenExpiryDays: 7, refreshRetryWindowSeconds: 0 },
      accountFlows: { requireVerifiedEmail: false },
      sessions: { maxActivePerUser: 100 },
    } as AppConfig;
    const moduleRef = await Test.createTestingModule({
      providers: [
        { provide: DataSource, useValue: dataSource },
        UnitOfWork,
        UsersService,
        UserRepository,
        TokensService,
        RefreshSuccessors,
        RefreshTokenRepository,
        SessionRepository,
        AuditEventRepository,
        { provide: AuditSink, useExisting: AuditEventRepository },
        WebhookDeliveryRepository,
        { provide: DeliverySink, useExisting: WebhookDeliveryRepository },
        SessionsService,
        {
          provide: AccessTokenService,
          useValue: { sign: () => ({ token: 'access', expiresAt: START }) },
        },
        { provide: Clock, useValue: clock },
        RandomSource,
        { provide: AppConfig, useValue: config },
        AuthEvents,
      ],
    }).compile();
    unitOfWork = moduleRef.get(UnitOfWork);
    tokens = moduleRef.get(TokensService);
    sut = moduleRef.get(SessionsService);
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    await dataSource.destroy();
  });

  describe('list', () => {
    it('should describe each session by its start and by the request that issued its newest token', async () => {
      const user = await createUser();
      const raw = await logIn(user, LAPTOP);
      clock.advance(30 * MINUTE_MS);
      const rotated = await refresh(raw, PHONE);

      const { sessions } = await sut.list(user.id, null);

      expect(sessions).toEqual([
        {
          id: await sessionOf(raw),
          createdAt: START.toISOString(),
          lastUsedAt: new Date(START.getTime() + 30 * MINUTE_MS).toISOString(),
          ip: PHONE.ip,
          userAgent: PHONE.userAgent,
          current: false,
        },
      ]);
      expect(await sessionOf(rotated)).toBe(sessions[0].id);
    });

    it('should order sessions by last use, newest first; a tie goes to the later start, then the id', async () => {
      const user = await createUser();
      const early = await logIn(user, LAPTOP);
      clock.advance(MINUTE_MS);
      const late = await logIn(user, PHONE);
      const twins = [await logIn(user, TABLET), await logIn(user, TABLET)];
      clock.advance(MINUTE_MS);
      await refresh(early, LAPTOP);
      await refresh(late, PHONE);

      const { sessions } = await sut.list(user.id, null);

      expect(sessions.map((session) => session.id)).toEqual([
        await sessionOf(late),
        await sessionOf(early),
        ...(await Promise.all(twins.map((raw) => sessionOf(raw)))).sort(),
      ]);
    });

    it('should leave out revoked sessions, expired sessions and other users', async () => {
      const user = await createUser();
      const other = await createUser();
      const loggedOut = await logIn(user, LAPTOP);
      await tokens.revoke(user.id, { refreshToken: loggedOut }, LAPTOP);
      const expiring = await logIn(user, LAPTOP);
      clock.advance(DAY_MS);
      const kept = await logIn(user, PHONE);
      await logIn(other, PHONE);
      clock.advance(6 * DAY_MS);

      const { sessions } = await sut.list(user.id, null);

      expect(sessions.map((session) => session.id)).toEqual([await sessionOf(kept)]);
      expect(await tokenOf(expiring)).toMatchObject({ isRevoked: false });
    });

    it('should mark current only the session whose newest token is named', async () => {
      const user = await createUser();
      const other = await createUser();
      const laptop = await logIn(user, LAPTOP);
      const replaced = await logIn(user, PHONE);
      clock.advance(MINUTE_MS);
      const phone = await refresh(replaced, PHONE);
      const stranger = await logIn(other, TABLET);

      const current = async (named: string | null): Promise<boolean[]> =>
        (await sut.list(user.id, named)).sessions.map((session) => session.current);

      // The phone's session was used last, so it comes first.
      expect(await current(phone)).toEqual([true, false]);
      expect(await current(laptop)).toEqual([false, true]);
      expect(await current(replaced)).toEqual([false, false]);
      expect(await current(stranger)).toEqual([false, false]);
      expect(await current('not-a-token')).toEqual([false, false]);
      expect(await current(null)).toEqual([false, false]);
    });
  });

  describe('revokeAll', () => {
    it('should revoke every active session and count them', async () => {
      const user = await createUser();
      const laptop = await logIn(user, LAPTOP);
      const phone = await logIn(user, PHONE);

      const result = await sut.revokeAll(user.id, {}, LAPTOP);

      expect(result).toEqual({ message: 'Sesiones revocadas exitosamente.', revokedSessions: 2 });
      for (const raw of [laptop, phone]) {
        expect(await tokenOf(raw)).toMatchObject({
          isRevoked: true,
          reasonRevoked: 'All sessions revoked by user',
          revokedByIp: LAPTOP.ip,
        });
      }
    });

    it("should keep the session of the bearer's active token with keepCurrent", async () => {
      const user = await createUser();
      const laptop = await logIn(user, LAPTOP);
      const phone = await refresh(await logIn(user, PHONE), PHONE);
      const revokeAll = jest.spyOn(tokens, 'revokeAll');

      const result = await sut.revokeAll(
        user.id,
        { keepCurrent: true, refreshToken: phone },
        PHONE,
      );

      expect(result.revokedSessions).toBe(1);
      expect(revokeAll).toHaveBeenCalledWith(user.id, PHONE, {
        reason: 'All sessions revoked by user',
        keepFamilyId: await sessionOf(phone),
      });
      expect(await tokenOf(phone)).toMatchObject({ isRevoked: false });
      expect(await tokenOf(laptop)).toMatchObject({ isRevoked: true });
    });

    it('should ignore the refresh token unless keepCurrent is true', async () => {
      const user = await createUser();
      const laptop = await logIn(user, LAPTOP);
      const activeSessionOf = jest.spyOn(tokens, 'activeSessionOf');

      const result = await sut.revokeAll(
        user.id,
        { keepCurrent: false, refreshToken: laptop },
        LAPTOP,
      );

      expect(result.revokedSessions).toBe(1);
      expect(activeSessionOf).not.toHaveBeenCalled();
    });

    it.each<[string, (user: User, other: User) => Promise<unknown>]>([
      ['no refresh token', () => Promise.resolve(undefined)],
      ['a null refresh token', () => Promise.resolve(null)],
      ['an unknown token', () => Promise.resolve('not-a-token')],
      ["another user's active token", (_user, other) => logIn(other, PHONE)],
      [
        'a replaced token of the user',
        async (user) => {
          const raw = await logIn(user, PHONE);
          await refresh(raw, PHONE);
          return raw;
        },
      ],
      [
        'a logged-out token of the user',
        async (user) => {
          const raw = await logIn(user, PHONE);
          await tokens.revoke(user.id, { refreshToken: raw }, PHONE);
          return raw;
        },
      ],
      [
        'an expired token of the user',
        async (user) => {
          const raw = await logIn(user, PHONE);
          clock.advance(7 * DAY_MS);
          return raw;
        },
      ],
    ])(
      'should refuse keepCurrent with %s as Refresh token inválido., revoking nothing',
      async (_case, tokenOf) => {
        const user = await createUser();
        const other = await createUser();
        await logIn(user, LAPTOP);
        const refreshToken = (await tokenOf(user, other)) as string | undefined;
        const before = await everyRow();
        const revokeAll = jest.spyOn(tokens, 'revokeAll');

        const error = await rejectionOf(
          sut.revokeAll(user.id, { keepCurrent: true, refreshToken }, LAPTOP),
        );

        expect(error).toEqual(new UnauthorizedError('Refresh token inválido.'));
        expect(error).toBeInstanceOf(UnauthorizedError);
        expect(revokeAll).not.toHaveBeenCalled();
        expect(await everyRow()).toEqual(before);
      },
    );
  });
});
