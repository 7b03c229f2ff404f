import { Test } from '@nestjs/testing';
import { buildUser } from '../../test/factories/user.factory.js';
import { FakeClock } from '../../test/utils/fake-clock.js';
import { originAt } from '../../test/utils/origin.js';
import { rejectionOf } from '../../test/utils/rejection.js';
import { AuditRetentionService } from '../audit/audit-retention.service.js';
import type { AuditEntry } from '../audit/audit-trail.service.js';
import { AuditTrail } from '../audit/audit-trail.service.js';
import { InvalidArgumentError, NotFoundError } from '../common/errors/domain-errors.js';
import { Clock } from '../common/time/clock.js';
import type { AuthEvent } from '../events/auth-event.js';
import { AuthEvents } from '../events/auth-events.js';
import { RecordingAuthEvents } from '../../test/utils/recording-auth-events.js';
import type { EntityManager } from 'typeorm';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { RevokedSessions } from '../tokens/tokens.service.js';

const MANAGER = {} as EntityManager;
import { TotpFactors } from '../two-factor/totp-factors.service.js';
import { Passkeys } from '../passkeys/passkeys.service.js';
import { TokenCleanupService } from '../tokens/cleanup/token-cleanup.service.js';
import { TokensService } from '../tokens/tokens.service.js';
import type { User } from '../users/entities/user.entity.js';
import type { LockoutState, LoginState } from '../users/users.service.js';
import { UsersService } from '../users/users.service.js';
import { AdminService } from './admin.service.js';

const ORIGIN = originAt('cli');
const LOCKED_UNTIL = new Date('2026-01-01T00:15:00.000Z');
const CUTOFF = new Date('2025-01-01T00:00:00.000Z');

/** The account these tests act on; the rest of it comes from the shared factory. */
const ALICE: Partial<User> = {
  id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
  username: 'alice',
  email: 'alice@example.com',
};

const buildAlice = (overrides: Partial<User> = {}): User => buildUser({ ...ALICE, ...overrides });

/** Users held in memory, with every call written down in order. */
class FakeUsers {
  /** The real loop, over this fake's reads. */
  readonly retryOnLoginStateChange = UsersService.prototype.retryOnLoginStateChange;
  readonly calls: string[] = [];
  /** States a concurrent login writes just before the next compare-and-set. */
  readonly interleaved: LockoutState[] = [];

  constructor(public user: User | null) {}

  findByEmail(email: string): Promise<User | null> {
    this.calls.push(`findByEmail ${email}`);
    return Promise.resolve(this.user?.email === email ? { ...this.user } : null);
  }

  findById(id: string): Promise<User | null> {
    this.calls.push(`findById ${id}`);
    return Promise.resolve(this.user?.id === id ? { ...this.user } : null);
  }

  setActive(_id: string, isActive: boolean): Promise<boolean> {
    this.calls.push(`setActive ${isActive}`);
    if (this.user === null || this.user.isActive === isActive) {
      return Promise.resolve(false);
    }
    this.user.isActive = isActive;
    return Promise.resolve(true);
  }

  replaceLoginState(_id: string, seen: LockoutState, next: LoginState): Promise<boolean> {
    this.calls.push(`replaceLoginState ${seen.failedLoginAttempts}`);
    const user = this.user;
    const concurrent = this.interleaved.shift();
    if (user === null) {
      return Promise.resolve(false);
    }
    if (concurrent !== undefined) {
      Object.assign(user, concurrent);
    }
    if (
      user.failedLoginAttempts !== seen.failedLoginAttempts ||
      user.lockoutEnd?.getTime() !== seen.lockoutEnd?.getTime()
    ) {
      return Promise.resolve(false);
    }
    Object.assign(user, next);
    return Promise.resolve(true);
  }
}

describe(AdminService.name, () => {
  let users: FakeUsers;
  let calls: string[];
  let told: AuthEvent[];
  let entries: AuditEntry[];
  let hasFactor = true;
  let sut: AdminService;

  async function build(user: User | null): Promise<void> {
    users = new FakeUsers(user);
    calls = users.calls;
    told = [];
    entries = [];
    const moduleRef = await Test.createTestingModule({
      providers: [
        AdminService,
        { provide: AuthEvents, useClass: RecordingAuthEvents },
        {
          provide: UnitOfWork,
          useValue: { transaction: <T>(work: (m: EntityManager) => Promise<T>) => work(MANAGER) },
        },
        { provide: Clock, useValue: new FakeClock() },
        { provide: UsersService, useValue: users },
        {
          provide: TokensService,
          useValue: {
            revokeAll: async (
              userId: string,
              _origin: unknown,
              options: {
                reason: string;
                alongside?: (m: EntityManager, revoked: RevokedSessions) => Promise<void>;
              },
            ) => {
              calls.push(`revokeAll ${userId} "${options.reason}"`);
              const revoked = { sessionIds: ['s1', 's2'] };
              await options.alongside?.(MANAGER, revoked);
              return revoked;
            },
          },
        },
        {
          provide: TokenCleanupService,
          useValue: { purgeExpired: () => Promise.resolve(12) },
        },
        {
          provide: TotpFactors,
          useValue: {
            remove: (_m: EntityManager, userId: string) => {
              calls.push(`removeTotp ${userId}`);
              return Promise.resolve(hasFactor);
            },
          },
        },
        {
          provide: Passkeys,
          useValue: {
            removeAllByAdministrator: (userId: string) => {
              calls.push(`removePasskeys ${userId}`);
              return Promise.resolve(2);
            },
          },
        },
        {
          provide: AuditRetentionService,
          useValue: {
            purge: () => {
              calls.push('purge');
              return Promise.resolve({ cutoff: CUTOFF, retentionDays: 365, deletedCount: 4 });
            },
            entriesBefore: async function* (before: Date) {
              calls.push(`entriesBefore ${before.toISOString()}`);
              yield* await Promise.resolve(entries);
            },
          },
        },
        {
          provide: AuditTrail,
          useValue: {
            latestForUser: (userId: string, limit: number) => {
              calls.push(`latestForUser ${userId} ${limit}`);
              return Promise.resolve(entries);
            },
          },
        },
      ],
    }).compile();
    moduleRef.get(AuthEvents).subscribe((record) => {
      calls.push(`event ${record.event.type}`);
      told.push(record.event);
    });
    sut = moduleRef.get(AdminService);
  }

  const account = { id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', email: 'alice@example.com' };

  it.each<[string, () => Promise<unknown>]>([
    ['deactivate', () => sut.deactivate({ email: '  Nobody@Example.COM ' }, ORIGIN)],
    ['activate', () => sut.activate({ email: '  Nobody@Example.COM ' }, ORIGIN)],
    ['unlock', () => sut.unlock({ email: '  Nobody@Example.COM ' }, ORIGIN)],
    ['revokeAllSessions', () => sut.revokeAllSessions({ email: '  Nobody@Example.COM ' }, ORIGIN)],
    ['auditOf', () => sut.auditOf('  Nobody@Example.COM ', 10, ORIGIN)],
    ['resetMfa', () => sut.resetMfa({ email: '  Nobody@Example.COM ' }, ORIGIN)],
  ])('should refuse %s for an unknown e-mail, normalised, and tell nothing', async (_name, act) => {
    await build(buildAlice());

    const error = await rejectionOf(act());

    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toHaveProperty('message', 'No account has the e-mail nobody@example.com.');
    expect(calls).toEqual(['findByEmail nobody@example.com']);
    expect(told).toEqual([]);
  });

  it('should find the account by its e-mail normalised as the API does', async () => {
    await build(buildAlice());

    await sut.activate({ email: ' ALICE@example.com\t' }, ORIGIN);

    expect(calls[0]).toBe('findByEmail alice@example.com');
  });

  it('should deactivate before revoking the sessions, and tell it in that order', async () => {
    await build(buildAlice());

    const result = await sut.deactivate({ email: 'alice@example.com' }, ORIGIN);

    expect(result).toEqual({ account, changed: true, revokedTokenCount: 2 });
    expect(calls).toEqual([
      'findByEmail alice@example.com',
      'setActive false',
      'event admin_user_deactivated',
      `revokeAll ${account.id} "Account deactivated by an administrator"`,
    ]);
    expect(told).toEqual([{ type: 'admin_user_deactivated', userId: account.id, changed: true }]);
  });

  it('should still revoke the sessions of an account that already is deactivated', async () => {
    await build(buildAlice({ isActive: false }));

    const result = await sut.deactivate({ email: 'alice@example.com' }, ORIGIN);

    expect(result).toEqual({ account, changed: false, revokedTokenCount: 2 });
    expect(calls).toContain(`revokeAll ${account.id} "Account deactivated by an administrator"`);
  });

  it.each([
    [false, true],
    [true, false],
  ])('should activate an account whose isActive is %s (changed: %s)', async (isActive, changed) => {
    await build(buildAlice({ isActive }));

    await expect(sut.activate({ email: 'alice@example.com' }, ORIGIN)).resolves.toEqual({
      account,
      changed,
    });

    expect(users.user?.isActive).toBe(true);
    expect(told).toEqual([{ type: 'admin_user_activated', userId: account.id, changed }]);
  });

  it('should clear the counter and the lockout and say what it cleared', async () => {
    await build(buildAlice({ failedLoginAttempts: 5, lockoutEnd: LOCKED_UNTIL }));

    const result = await sut.unlock({ email: 'alice@example.com' }, ORIGIN);

    expect(result).toEqual({ account, failedAttempts: 5, lockedUntil: LOCKED_UNTIL });
    expect(users.user).toMatchObject({ failedLoginAttempts: 0, lockoutEnd: null });
    expect(told).toEqual([
      {
        type: 'admin_user_unlocked',
        userId: account.id,
        failedAttempts: 5,
        lockedUntil: LOCKED_UNTIL,
      },
    ]);
  });

  it('should read the account again when a login counted a failure meanwhile', async () => {
    await build(buildAlice({ failedLoginAttempts: 4 }));
    users.interleaved.push({ failedLoginAttempts: 5, lockoutEnd: LOCKED_UNTIL });

    const result = await sut.unlock({ email: 'alice@example.com' }, ORIGIN);

    expect(result).toEqual({ account, failedAttempts: 5, lockedUntil: LOCKED_UNTIL });
    expect(calls).toEqual([
      'findByEmail alice@example.com',
      'replaceLoginState 4',
      `findById ${account.id}`,
      'replaceLoginState 5',
      'event admin_user_unlocked',
    ]);
    expect(users.user).toMatchObject({ failedLoginAttempts: 0, lockoutEnd: null });
  });

  it('should write nothing when there is nothing to clear, and still tell it', async () => {
    await build(buildAlice());

    const result = await sut.unlock({ email: 'alice@example.com' }, ORIGIN);

    expect(result).toEqual({ account, failedAttempts: 0, lockedUntil: null });
    expect(calls).toEqual(['findByEmail alice@example.com', 'event admin_user_unlocked']);
  });

  it('should revoke every session of the account and tell how many', async () => {
    await build(buildAlice());

    const result = await sut.revokeAllSessions({ email: 'alice@example.com' }, ORIGIN);

    expect(result).toEqual({ account, revokedTokenCount: 2 });
    expect(calls.slice(1)).toEqual([
      `revokeAll ${account.id} "Sessions revoked by an administrator"`,
      'event admin_sessions_revoked',
    ]);
    expect(told).toEqual([
      { type: 'admin_sessions_revoked', userId: account.id, revokedTokenCount: 2 },
    ]);
  });

  it.each([true, false])(
    'should remove the second factor (there was one: %s) and tell it',
    async (had) => {
      hasFactor = had;
      await build(buildAlice());

      const result = await sut.resetMfa({ email: 'alice@example.com' }, ORIGIN);

      expect(result).toEqual({ account, changed: had });
      expect(calls.slice(1)).toEqual([`removeTotp ${account.id}`, 'event admin_totp_reset']);
      expect(told).toEqual([{ type: 'admin_totp_reset', userId: account.id, changed: had }]);
    },
  );

  it('should purge expired tokens once and tell it with no user', async () => {
    await build(null);

    await expect(sut.purgeExpiredTokens(ORIGIN)).resolves.toBe(12);

    expect(told).toEqual([{ type: 'admin_tokens_purged', userId: null, deletedCount: 12 }]);
  });

  it('should purge the audit trail once and tell it with its counts and no user', async () => {
    await build(null);

    await expect(sut.purgeAudit(ORIGIN)).resolves.toEqual({
      cutoff: CUTOFF,
      retentionDays: 365,
      deletedCount: 4,
    });

    expect(calls).toEqual(['purge', 'event admin_audit_purged']);
    expect(told).toEqual([
      {
        type: 'admin_audit_purged',
        userId: null,
        cutoff: CUTOFF,
        retentionDays: 365,
        deletedCount: 4,
      },
    ]);
  });

  it('should hand every exported entry to the writer in order, then tell the export', async () => {
    await build(null);
    entries = [{ id: 'e1' } as AuditEntry, { id: 'e2' } as AuditEntry];
    const written: string[] = [];

    const count = await sut.exportAudit(
      CUTOFF,
      (entry) => {
        written.push(entry.id);
        calls.push(`write ${entry.id}`);
        return Promise.resolve();
      },
      ORIGIN,
    );

    expect(count).toBe(2);
    expect(calls).toEqual([
      `entriesBefore ${CUTOFF.toISOString()}`,
      'write e1',
      'write e2',
      'event admin_audit_exported',
    ]);
    expect(told).toEqual([
      { type: 'admin_audit_exported', userId: null, before: CUTOFF, rowCount: 2 },
    ]);
  });

  it('should tell no export when writing fails', async () => {
    await build(null);
    entries = [{ id: 'e1' } as AuditEntry];

    const error = await rejectionOf(
      sut.exportAudit(CUTOFF, () => Promise.reject(new Error('disk full')), ORIGIN),
    );

    expect(error).toEqual(new Error('disk full'));
    expect(told).toEqual([]);
  });

  it('should read the newest entries of the account, then tell that they were viewed', async () => {
    await build(buildAlice());
    entries = [{ type: 'login_succeeded' } as AuditEntry, { type: 'registered' } as AuditEntry];

    const result = await sut.auditOf('alice@example.com', 2, ORIGIN);

    expect(result).toEqual({ account, entries });
    expect(calls.slice(1)).toEqual([`latestForUser ${account.id} 2`, 'event admin_audit_viewed']);
    expect(told).toEqual([{ type: 'admin_audit_viewed', userId: account.id, rowCount: 2 }]);
  });

  it.each([0, -1, 1.5, 1001, Number.NaN])('should refuse the audit limit %p', async (limit) => {
    await build(buildAlice());

    const error = await rejectionOf(sut.auditOf('alice@example.com', limit, ORIGIN));

    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error).toHaveProperty(
      'message',
      'The audit limit must be a whole number from 1 to 1000.',
    );
    expect(calls).toEqual([]);
  });
});
