import { jest } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { createHash } from 'node:crypto';
import { DataSource, IsNull } from 'typeorm';
import { buildUser } from '../../test/factories/user.factory.js';
import { FakeClock } from '../../test/utils/fake-clock.js';
import { SequenceRandomSource } from '../../test/utils/fake-random.js';
import { createInMemoryDataSource } from '../../test/utils/in-memory-database.js';
import { originAt } from '../../test/utils/origin.js';
import { rejectionOf } from '../../test/utils/rejection.js';
import { UnauthorizedError } from '../common/errors/domain-errors.js';
import { RandomSource } from '../common/random/random-source.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/app-config.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { AuthEvent } from '../events/auth-event.js';
import { AuditEventRepository } from '../audit/audit-event.repository.js';
import { AuditSink } from '../events/audit-sink.js';
import { DeliverySink } from '../events/delivery-sink.js';
import { WebhookDeliveryRepository } from '../webhooks/webhook-delivery.repository.js';
import { AuthEvents } from '../events/auth-events.js';
import { User } from '../users/entities/user.entity.js';
import { UserRepository } from '../users/user.repository.js';
import { UsersService } from '../users/users.service.js';
import { AccessTokenService, type SignedAccessToken } from './access-token.service.js';
import { RefreshToken } from './entities/refresh-token.entity.js';
import { Session } from './entities/session.entity.js';
import {
  familyView,
  storedTokenView,
  type TokenView,
} from '../../test/factories/refresh-token.factory.js';
import { RefreshTokenRepository } from './storage/refresh-token.repository.js';
import { RefreshSuccessors } from './storage/refresh-successors.js';
import { SessionRepository } from './storage/session.repository.js';
import { TokensService } from './tokens.service.js';

const START = new Date('2026-01-01T12:00:00.000Z');
const DAY_MS = 24 * 60 * 60 * 1000;
const ACCESS_EXPIRY = new Date('2026-01-01T12:15:00.000Z');
/** Users are created a month before the tests' start. */
const USER_CREATED_AT = new Date('2025-12-01T00:00:00.000Z');
const LOGIN_IP = '203.0.113.7';
const REFRESH_IP = '198.51.100.9';

const sha256 = (raw: string): string => createHash('sha256').update(raw, 'utf8').digest('hex');

describe(TokensService.name, () => {
  let dataSource: DataSource;
  let unitOfWork: UnitOfWork;
  let clock: FakeClock;
  let sign: jest.Mock<(user: Pick<User, 'id' | 'email'>, sessionId: string) => SignedAccessToken>;
  let sut: TokensService;
  let events: AuthEvent[];

  /** The token as spec §2.2 tells it, from its row and its session's (decision 0027). */
  const tokenOf = async (raw: string): Promise<TokenView> => {
    const view = await storedTokenView(dataSource, raw);
    if (view === null) {
      throw new Error('no such token');
    }
    return view;
  };
  const family = (familyId: string): Promise<TokenView[]> => familyView(dataSource, familyId);
  const createUser = async (overrides: Partial<User> = {}): Promise<User> => {
    const user = buildUser({ createdAt: USER_CREATED_AT, ...overrides });
    await dataSource.manager.insert(User, user);
    return user;
  };
  const issue = async (user: User, ip = LOGIN_IP): Promise<string> =>
    (await unitOfWork.transaction((m) => sut.issue(user, originAt(ip), m))).response.refreshToken;

  /** Issues a token and rotates it `rotations` times; returns the raw value of every generation. */
  const chain = async (user: User, rotations: number): Promise<string[]> => {
    const raws = [await issue(user)];
    for (let i = 0; i < rotations; i += 1) {
      clock.advance(60_000);
      raws.push((await sut.refresh(raws[raws.length - 1], originAt(REFRESH_IP))).refreshToken);
    }
    return raws;
  };

  beforeEach(async () => {
    dataSource = await createInMemoryDataSource();
    clock = new FakeClock(START);
    sign = jest.fn((_user: Pick<User, 'id' | 'email'>, _sessionId: string) => ({
      token: 'access',
      expiresAt: ACCESS_EXPIRY,
    }));
    const config = {
      jwt: {
        secret: 's'.repeat(32),
        issuer: 'keygate',
        audience: 'keygate-clients',
        accessTokenExpiryMinutes: 15,
        refreshTokenExpiryDays: 7,
        clockSkewSeconds: 0,
        requireActiveSession: false,
        refreshRetryWindowSeconds: 0,
      },
      accountFlows: { requireVerifiedEmail: false },
      sessions: { maxActivePerUser: 3 },
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
        { provide: AccessTokenService, useValue: { sign } },
        { provide: Clock, useValue: clock },
        // Ids and token values are the sequence's, so a test can write them down.
        { provide: RandomSource, useValue: new SequenceRandomSource() },
        { provide: AppConfig, useValue: config },
        AuthEvents,
      ],
    }).compile();
    unitOfWork = moduleRef.get(UnitOfWork);
    events = [];
    moduleRef.get(AuthEvents).subscribe((record) => events.push(record.event));
    sut = moduleRef.get(TokensService);
  });

  afterEach(async () => {
    await dataSource.destroy();
  });

  describe('issue', () => {
    it('should return the access token, a new refresh token and the public user', async () => {
      const user = await createUser();

      const { response, familyId } = await unitOfWork.transaction((m) =>
        sut.issue(user, originAt(LOGIN_IP), m),
      );

      expect(familyId).toBe((await tokenOf(response.refreshToken)).familyId);
      expect(response).toEqual({
        accessToken: 'access',
        refreshToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) as unknown,
        accessTokenExpiry: '2026-01-01T12:15:00.000Z',
        user: {
          id: user.id,
          username: user.username,
          email: user.email,
          createdAt: '2025-12-01T00:00:00.000Z',
        },
      });
      expect(sign).toHaveBeenCalledWith(
        expect.objectContaining({ id: user.id, email: user.email }),
        familyId,
        ['pwd'],
        // No issue instant or id of its own: the clock's and a random one.
        undefined,
      );
    });

    it('should take the family id and the token value from the injected randomness', async () => {
      const user = await createUser();

      const { response, familyId } = await unitOfWork.transaction((m) =>
        sut.issue(user, originAt(LOGIN_IP), m),
      );

      // The sequence's first call (a UUID) names the family, its second (32 bytes) is the token.
      expect(familyId).toBe('00000000-0000-4000-8000-000000000001');
      expect(response.refreshToken).toBe('AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAI');
      await expect(tokenOf(response.refreshToken)).resolves.toMatchObject({
        id: familyId,
        familyId,
      });
    });

    it('should start a new family at generation 0 that expires after the configured days', async () => {
      const user = await createUser();

      const raw = await issue(user);

      const token = await tokenOf(raw);
      expect(token).toEqual(
        expect.objectContaining({
          id: token.id,
          userId: user.id,
          familyId: token.id,
          generation: 0,
          expiresAt: new Date(START.getTime() + 7 * DAY_MS),
          createdAt: START,
          createdByIp: LOGIN_IP,
          createdByUserAgent: 'jest',
          sessionStartedAt: START,
          isRevoked: false,
          revokedAt: null,
          revokedByIp: null,
          reasonRevoked: null,
          replacedByTokenId: null,
          authMethods: 'pwd',
        }),
      );
    });

    it('should store only the SHA-256 hash of the token, never the token', async () => {
      const user = await createUser();

      const raw = await issue(user);

      const rows = await dataSource.query<{ tokenHash: Buffer }[]>('SELECT * FROM refresh_tokens');
      expect(JSON.stringify(rows)).not.toContain(raw);
      expect(rows.map((row) => row.tokenHash.toString('hex'))).toEqual([sha256(raw)]);
    });

    it('should give every login its own token and family', async () => {
      const user = await createUser();

      const first = await tokenOf(await issue(user));
      const second = await tokenOf(await issue(user));

      expect(second.id).not.toBe(first.id);
      expect(second.familyId).not.toBe(first.familyId);
    });

    it('should write nothing when the caller transaction fails', async () => {
      const user = await createUser();

      await expect(
        unitOfWork.transaction(async (m) => {
          await sut.issue(user, originAt(LOGIN_IP), m);
          throw new Error('the login failed later');
        }),
      ).rejects.toThrow('the login failed later');

      await expect(dataSource.manager.countBy(RefreshToken, {})).resolves.toBe(0);
      await expect(dataSource.manager.countBy(Session, {})).resolves.toBe(0);
    });

    it('should end the least recently used session when one more than the limit starts', async () => {
      const user = await createUser();
      const other = await createUser({ email: 'other@example.com' });
      const tokens: TokenView[] = [];
      for (let i = 0; i < 3; i += 1) {
        tokens.push(await tokenOf(await issue(user)));
        clock.advance(1000);
      }
      await issue(other);

      const fourth = await tokenOf(await issue(user));

      const stored = await dataSource.manager.findBy(Session, { userId: user.id });
      const active = stored.filter((session) => session.endedAt === null).map((s) => s.id);
      expect(active.sort()).toEqual(
        [tokens[1].familyId, tokens[2].familyId, fourth.familyId].sort(),
      );
      expect(stored.find((session) => session.id === tokens[0].familyId)).toMatchObject({
        endedAt: clock.now(),
        endedByIp: LOGIN_IP,
        endReason: 'Session limit reached',
      });
      await expect(
        dataSource.manager.countBy(Session, { userId: other.id, endedAt: IsNull() }),
      ).resolves.toBe(1);
    });

    it('should count only active sessions against the limit', async () => {
      const user = await createUser();
      const first = await tokenOf(await issue(user));
      await dataSource.manager.update(Session, { id: first.familyId }, { endedAt: clock.now() });
      for (let i = 0; i < 3; i += 1) {
        await issue(user);
      }

      await expect(
        dataSource.manager.countBy(Session, { userId: user.id, endedAt: IsNull() }),
      ).resolves.toBe(3);
      await expect(
        dataSource.manager.countBy(Session, { endReason: 'Session limit reached' }),
      ).resolves.toBe(0);
    });
  });

  describe('refresh', () => {
    it('should rotate: revoke the old token, linked to a new one of the next generation', async () => {
      const user = await createUser();
      const raw = await issue(user);
      const old = await tokenOf(raw);
      clock.advance(60_000);
      const now = clock.now();

      const response = await sut.refresh(raw, { ...originAt(REFRESH_IP), userAgent: 'Phone/2.0' });

      expect(response.refreshToken).not.toBe(raw);
      expect(response.accessToken).toBe('access');
      expect(response.user).toEqual({
        id: user.id,
        username: user.username,
        email: user.email,
        createdAt: '2025-12-01T00:00:00.000Z',
      });
      const replacement = await tokenOf(response.refreshToken);
      // A rotated token's revocation is its successor's creation (decision 0027); what it was
      // created from is its successor's now.
      await expect(tokenOf(raw)).resolves.toEqual({
        ...old,
        createdByIp: null,
        createdByUserAgent: null,
        isRevoked: true,
        revokedAt: now,
        revokedByIp: REFRESH_IP,
        reasonRevoked: 'Replaced by new token',
        replacedByTokenId: replacement.id,
      });
      expect(replacement).toMatchObject({
        userId: user.id,
        familyId: old.familyId,
        generation: 1,
        createdAt: now,
        createdByIp: REFRESH_IP,
        createdByUserAgent: 'Phone/2.0',
        sessionStartedAt: START,
        expiresAt: new Date(now.getTime() + 7 * DAY_MS),
        isRevoked: false,
        replacedByTokenId: null,
      });
    });

    it('should carry the start of the session along the chain', async () => {
      const user = await createUser();

      const raws = await chain(user, 3);

      const tokens = await family((await tokenOf(raws[0])).familyId);
      expect(tokens.map((t) => t.createdAt.getTime() - START.getTime())).toEqual([
        0, 60_000, 120_000, 180_000,
      ]);
      expect(tokens.map((t) => t.sessionStartedAt)).toEqual([START, START, START, START]);
    });

    it('should rotate on SQLite with its prepared statements alone, reading the session start from the token row', async () => {
      const user = await createUser();
      const raw = await issue(user);
      const typeOrmQueries = jest.spyOn(dataSource, 'createQueryRunner');

      const response = await sut.refresh(raw, originAt(REFRESH_IP));

      expect(typeOrmQueries).not.toHaveBeenCalled();
      expect((await tokenOf(response.refreshToken)).sessionStartedAt).toEqual(START);
    });

    it('should record no User-Agent when the request sent none', async () => {
      const user = await createUser();
      const raw = await issue(user);

      const response = await sut.refresh(raw, { ...originAt(REFRESH_IP), userAgent: null });

      expect((await tokenOf(response.refreshToken)).createdByUserAgent).toBeNull();
    });

    it('should let the new token be rotated in turn', async () => {
      const user = await createUser();

      const raws = await chain(user, 3);

      const tokens = await family((await tokenOf(raws[0])).familyId);
      expect(tokens.map((t) => t.generation)).toEqual([0, 1, 2, 3]);
      expect(tokens.map((t) => t.isRevoked)).toEqual([true, true, true, false]);
      expect(tokens.map((t) => t.replacedByTokenId)).toEqual([
        tokens[1].id,
        tokens[2].id,
        tokens[3].id,
        null,
      ]);
    });

    it('should revoke every descendant when generation 0 is replayed', async () => {
      const user = await createUser();
      const raws = await chain(user, 3);
      const familyId = (await tokenOf(raws[0])).familyId;
      const before = await family(familyId);
      clock.advance(60_000);
      const replayedAt = clock.now();

      const error = await rejectionOf(sut.refresh(raws[0], originAt('192.0.2.66')));

      expect(error).toBeInstanceOf(UnauthorizedError);
      expect(error).toHaveProperty('message', 'Refresh token revocado.');
      const after = await family(familyId);
      expect(after.every((t) => t.isRevoked)).toBe(true);
      // Generations 0 to 2 were already revoked by rotation and keep that record.
      expect(after.slice(0, 3)).toEqual(before.slice(0, 3));
      // The descendant that was still active is revoked as reuse.
      expect(after[3]).toEqual({
        ...before[3],
        isRevoked: true,
        revokedAt: replayedAt,
        revokedByIp: '192.0.2.66',
        reasonRevoked: 'Token reuse detectado',
      });
    });

    it('should end the session: the newest token no longer refreshes after a replay', async () => {
      const user = await createUser();
      const raws = await chain(user, 3);
      await expect(sut.refresh(raws[0], originAt(REFRESH_IP))).rejects.toThrow(
        'Refresh token revocado.',
      );

      await expect(sut.refresh(raws[3], originAt(REFRESH_IP))).rejects.toThrow(
        'Refresh token revocado.',
      );
    });

    it('should revoke only the generations after a replayed generation 2', async () => {
      const user = await createUser();
      const raws = await chain(user, 3);
      const familyId = (await tokenOf(raws[0])).familyId;
      const before = await family(familyId);

      await expect(sut.refresh(raws[2], originAt(REFRESH_IP))).rejects.toThrow(
        new UnauthorizedError('Refresh token revocado.'),
      );

      const after = await family(familyId);
      expect(after.slice(0, 3)).toEqual(before.slice(0, 3));
      expect(after[3]).toMatchObject({ isRevoked: true, reasonRevoked: 'Token reuse detectado' });
    });

    it('should report a logged-out token presented again as revoked, keeping its record', async () => {
      const user = await createUser();
      const raws = await chain(user, 1);
      await sut.revoke(user.id, { refreshToken: raws[1] }, originAt(LOGIN_IP));
      const loggedOut = await tokenOf(raws[1]);

      await expect(sut.refresh(raws[1], originAt(REFRESH_IP))).rejects.toThrow(
        'Refresh token revocado.',
      );

      await expect(tokenOf(raws[1])).resolves.toEqual(loggedOut);
    });

    it('should let only one of two simultaneous refreshes of one token win', async () => {
      const user = await createUser();
      const raw = await issue(user);

      const results = await Promise.allSettled([
        sut.refresh(raw, originAt(REFRESH_IP)),
        sut.refresh(raw, originAt(REFRESH_IP)),
      ]);

      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
      const [winner, loser] = results;
      const reason = loser.status === 'rejected' ? (loser.reason as unknown) : undefined;
      expect(reason).toBeInstanceOf(UnauthorizedError);
      expect(reason).toHaveProperty('message', 'Refresh token revocado.');
      // The second presentation is a reuse, so the token the winner got is revoked too.
      const winnerRaw = winner.status === 'fulfilled' ? winner.value.refreshToken : '';
      await expect(tokenOf(winnerRaw)).resolves.toMatchObject({
        generation: 1,
        isRevoked: true,
        reasonRevoked: 'Token reuse detectado',
      });
      await expect(dataSource.manager.countBy(RefreshToken, {})).resolves.toBe(2);
    });

    it('should leave the other families of the user alone on a replay', async () => {
      const user = await createUser();
      const stolen = await chain(user, 1);
      const otherSession = await issue(user);

      await expect(sut.refresh(stolen[0], originAt(REFRESH_IP))).rejects.toThrow(
        'Refresh token revocado.',
      );

      await expect(tokenOf(otherSession)).resolves.toMatchObject({ isRevoked: false });
      await expect(sut.refresh(otherSession, originAt(REFRESH_IP))).resolves.toHaveProperty(
        'accessToken',
        'access',
      );
    });

    it('should refuse a token at its expiry instant exactly, without changing it', async () => {
      const user = await createUser();
      const raw = await issue(user);
      const before = await tokenOf(raw);
      clock.set(new Date(START.getTime() + 7 * DAY_MS));

      const error = await rejectionOf(sut.refresh(raw, originAt(REFRESH_IP)));

      expect(error).toBeInstanceOf(UnauthorizedError);
      expect(error).toHaveProperty('message', 'Refresh token expirado.');
      await expect(tokenOf(raw)).resolves.toEqual(before);
      await expect(dataSource.manager.countBy(RefreshToken, {})).resolves.toBe(1);
    });

    it('should still rotate a token one millisecond before its expiry', async () => {
      const user = await createUser();
      const raw = await issue(user);
      clock.set(new Date(START.getTime() + 7 * DAY_MS - 1));

      await expect(sut.refresh(raw, originAt(REFRESH_IP))).resolves.toHaveProperty(
        'accessToken',
        'access',
      );
    });

    it.each([
      ['an unknown token', 'x'.repeat(43)],
      ['an empty string', ''],
    ])('should refuse %s as invalid', async (_label, raw) => {
      const user = await createUser();
      await issue(user);

      const error = await rejectionOf(sut.refresh(raw, originAt(REFRESH_IP)));

      expect(error).toBeInstanceOf(UnauthorizedError);
      expect(error).toHaveProperty('message', 'Refresh token inválido.');
    });

    it('should not accept the stored hash in place of the token', async () => {
      const user = await createUser();
      const raw = await issue(user);

      await expect(sut.refresh(sha256(raw), originAt(REFRESH_IP))).rejects.toThrow(
        'Refresh token inválido.',
      );
    });

    it('should refuse the token of a deactivated user without rotating it', async () => {
      const user = await createUser();
      const raw = await issue(user);
      await dataSource.manager.update(User, { id: user.id }, { isActive: false });
      const before = await tokenOf(raw);

      const error = await rejectionOf(sut.refresh(raw, originAt(REFRESH_IP)));

      expect(error).toBeInstanceOf(UnauthorizedError);
      expect(error).toHaveProperty('message', 'Cuenta desactivada.');
      await expect(tokenOf(raw)).resolves.toEqual(before);
      await expect(dataSource.manager.countBy(RefreshToken, {})).resolves.toBe(1);
    });

    it('should sign the access token for the current state of the user', async () => {
      const user = await createUser({ username: 'old-name' });
      const raw = await issue(user);
      await dataSource.manager.update(User, { id: user.id }, { username: 'new-name' });

      const response = await sut.refresh(raw, originAt(REFRESH_IP));

      expect(response.user.username).toBe('new-name');
      expect(sign).toHaveBeenLastCalledWith(
        expect.objectContaining({ id: user.id }),
        (await tokenOf(raw)).familyId,
        ['pwd'],
        undefined,
      );
    });
  });

  describe('revoke', () => {
    it('should revoke the bearer token with the given reason and IP', async () => {
      const user = await createUser();
      const raw = await issue(user);
      const before = await tokenOf(raw);
      clock.advance(5_000);

      const response = await sut.revoke(
        user.id,
        { refreshToken: raw, reason: 'Logout from phone' },
        originAt('192.0.2.1'),
      );

      expect(response).toEqual({ message: 'Token revocado exitosamente.' });
      await expect(tokenOf(raw)).resolves.toEqual({
        ...before,
        isRevoked: true,
        revokedAt: clock.now(),
        revokedByIp: '192.0.2.1',
        reasonRevoked: 'Logout from phone',
      });
    });

    it('should use a default reason when none is given', async () => {
      const user = await createUser();
      const raw = await issue(user);

      await sut.revoke(user.id, { refreshToken: raw }, originAt('192.0.2.1'));

      await expect(tokenOf(raw)).resolves.toMatchObject({ reasonRevoked: 'Revoked by user' });
    });

    it('should stop the revoked token from refreshing', async () => {
      const user = await createUser();
      const raw = await issue(user);

      await sut.revoke(user.id, { refreshToken: raw }, originAt('192.0.2.1'));

      await expect(sut.refresh(raw, originAt(REFRESH_IP))).rejects.toThrow(
        'Refresh token revocado.',
      );
    });

    it("should treat another user's token as not found and leave it unchanged", async () => {
      const owner = await createUser();
      const intruder = await createUser();
      const raw = await issue(owner);
      const before = await tokenOf(raw);

      const error = await rejectionOf(
        sut.revoke(intruder.id, { refreshToken: raw, reason: 'hijack' }, originAt('192.0.2.1')),
      );

      expect(error).toBeInstanceOf(UnauthorizedError);
      expect(error).toHaveProperty('message', 'Refresh token inválido.');
      await expect(tokenOf(raw)).resolves.toEqual(before);
    });

    it('should refuse an unknown token as invalid', async () => {
      const user = await createUser();

      const error = await rejectionOf(
        sut.revoke(user.id, { refreshToken: 'unknown' }, originAt('192.0.2.1')),
      );

      expect(error).toBeInstanceOf(UnauthorizedError);
      expect(error).toHaveProperty('message', 'Refresh token inválido.');
    });

    it('should keep the first reason, IP and time when revoked twice', async () => {
      const user = await createUser();
      const raw = await issue(user);
      await sut.revoke(user.id, { refreshToken: raw, reason: 'first' }, originAt('192.0.2.1'));
      const first = await tokenOf(raw);
      clock.advance(60_000);

      const response = await sut.revoke(
        user.id,
        { refreshToken: raw, reason: 'second' },
        originAt('192.0.2.2'),
      );

      expect(response).toEqual({ message: 'Token revocado exitosamente.' });
      await expect(tokenOf(raw)).resolves.toEqual(first);
      expect(first).toMatchObject({ reasonRevoked: 'first', revokedByIp: '192.0.2.1' });
    });

    it('should end the session a rotated token led to', async () => {
      const user = await createUser();
      const raws = await chain(user, 2);

      await sut.revoke(user.id, { refreshToken: raws[0], reason: 'logout' }, originAt('192.0.2.1'));

      await expect(tokenOf(raws[2])).resolves.toMatchObject({
        isRevoked: true,
        reasonRevoked: 'logout',
        revokedByIp: '192.0.2.1',
      });
      await expect(tokenOf(raws[1])).resolves.toMatchObject({
        reasonRevoked: 'Replaced by new token',
      });
    });

    it('should not touch the other sessions of the user', async () => {
      const user = await createUser();
      const raw = await issue(user);
      const other = await issue(user);

      await sut.revoke(user.id, { refreshToken: raw }, originAt('192.0.2.1'));

      await expect(tokenOf(other)).resolves.toMatchObject({ isRevoked: false });
    });
  });
  describe('events', () => {
    it('should tell a rotation with the session and the generation of the presented token', async () => {
      const user = await createUser();
      const raws = await chain(user, 1);

      const [presented, replacement] = await Promise.all(raws.map(tokenOf));
      expect(replacement.generation).toBe(presented.generation + 1);
      expect(events).toEqual([
        {
          type: 'token_refreshed',
          userId: user.id,
          familyId: presented.familyId,
          generation: presented.generation,
        },
      ]);
    });

    it('should tell each refusal with its reason', async () => {
      const expiring = await createUser();
      const expired = await issue(expiring);
      const inactive = await createUser();
      const deactivatedRaw = await issue(inactive);
      await dataSource.manager.update(User, { id: inactive.id }, { isActive: false });

      await rejectionOf(sut.refresh('never-issued', originAt(REFRESH_IP)));
      clock.advance(8 * DAY_MS);
      await rejectionOf(sut.refresh(expired, originAt(REFRESH_IP)));
      clock.advance(-8 * DAY_MS);
      await rejectionOf(sut.refresh(deactivatedRaw, originAt(REFRESH_IP)));

      expect(events).toEqual([
        { type: 'refresh_failed', userId: null, reason: 'invalid' },
        { type: 'refresh_failed', userId: expiring.id, reason: 'expired' },
        { type: 'refresh_failed', userId: inactive.id, reason: 'deactivated' },
      ]);
    });

    it('should tell a reuse with the token presented and whether it ended the session', async () => {
      const user = await createUser();
      const raws = await chain(user, 3);
      events.length = 0;

      await rejectionOf(sut.refresh(raws[1], originAt(REFRESH_IP)));

      const [first, second, third, fourth] = await Promise.all(raws.map(tokenOf));
      expect(events).toEqual([
        {
          type: 'reuse_detected',
          userId: user.id,
          familyId: first.familyId,
          generation: second.generation,
          sessionEnded: true,
        },
      ]);
      expect(third.isRevoked).toBe(true);
      expect(fourth).toMatchObject({ isRevoked: true, reasonRevoked: 'Token reuse detectado' });
    });

    it('should tell a revocation with whether it ended the session, and nothing when it refuses', async () => {
      const user = await createUser();
      const raws = await chain(user, 2);
      events.length = 0;

      await rejectionOf(sut.revoke(user.id, { refreshToken: 'unknown' }, originAt(LOGIN_IP)));
      await sut.revoke(user.id, { refreshToken: raws[2] }, originAt(LOGIN_IP));
      await sut.revoke(user.id, { refreshToken: raws[2] }, originAt(LOGIN_IP));

      const last = await tokenOf(raws[2]);
      expect(events).toEqual([
        {
          type: 'token_revoked',
          userId: user.id,
          familyId: last.familyId,
          generation: last.generation,
          sessionEnded: true,
          wasRotated: false,
        },
        {
          type: 'token_revoked',
          userId: user.id,
          familyId: last.familyId,
          generation: last.generation,
          sessionEnded: false,
          wasRotated: false,
        },
      ]);
    });
  });
  describe('revokeAll', () => {
    it("should revoke every active token of the user but the kept session's, and tell it", async () => {
      const user = await createUser();
      const other = await createUser();
      const kept = await chain(user, 1);
      const ended = await chain(user, 2);
      const untouched = await issue(other);
      const keptFamily = (await tokenOf(kept[0])).familyId;
      events.length = 0;

      const revoked = await sut.revokeAll(user.id, originAt('192.0.2.5'), {
        reason: 'Admin',
        keepFamilyId: keptFamily,
      });

      const endedLast = await tokenOf(ended[2]);
      expect(revoked).toEqual({ sessionIds: [endedLast.familyId] });
      expect(endedLast).toMatchObject({
        isRevoked: true,
        revokedByIp: '192.0.2.5',
        reasonRevoked: 'Admin',
      });
      expect((await tokenOf(kept[1])).isRevoked).toBe(false);
      expect((await tokenOf(untouched)).isRevoked).toBe(false);
      expect(events).toEqual([
        {
          type: 'sessions_revoked',
          userId: user.id,
          keepFamilyId: keptFamily,
          endedSessionIds: [endedLast.familyId],
        },
      ]);
    });

    it('should revoke every session when none is kept', async () => {
      const user = await createUser();
      const first = await issue(user);
      const second = await issue(user);

      const revoked = await sut.revokeAll(user.id, originAt(LOGIN_IP), { reason: 'All' });

      const ids = [(await tokenOf(first)).familyId, (await tokenOf(second)).familyId];
      expect([...revoked.sessionIds].sort()).toEqual(ids.sort());
      await expect(sut.refresh(first, originAt(REFRESH_IP))).rejects.toThrow(
        'Refresh token revocado.',
      );
    });

    it('should leave a session whose token has expired as it is, and not count it', async () => {
      const user = await createUser();
      const expired = await issue(user);
      clock.advance(DAY_MS);
      const active = await issue(user);
      clock.advance(6 * DAY_MS);
      const expiredBefore = await tokenOf(expired);

      const revoked = await sut.revokeAll(user.id, originAt(LOGIN_IP), { reason: 'All' });

      const activeToken = await tokenOf(active);
      expect(revoked).toEqual({ sessionIds: [activeToken.familyId] });
      await expect(tokenOf(expired)).resolves.toEqual(expiredBefore);
      await expect(sut.refresh(expired, originAt(REFRESH_IP))).rejects.toThrow(
        'Refresh token expirado.',
      );
    });
  });
});
