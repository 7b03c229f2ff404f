import { Test } from '@nestjs/testing';
import { randomUUID } from 'node:crypto';
import { DataSource, QueryFailedError } from 'typeorm';
import { buildUser } from '../../test/factories/user.factory.js';
import { createInMemoryDataSource } from '../../test/utils/in-memory-database.js';
import { rejectionOf } from '../../test/utils/rejection.js';
import { ConflictError, NotFoundError, UnauthorizedError } from '../common/errors/domain-errors.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { User } from './entities/user.entity.js';
import { AccountStateCache } from './account-cache/account-state-cache.js';
import { UserRepository } from './user.repository.js';
import { UsersService } from './users.service.js';

describe(UsersService.name, () => {
  let dataSource: DataSource;
  let unitOfWork: UnitOfWork;
  let sut: UsersService;

  const stored = (id: string): Promise<User | null> => dataSource.manager.findOneBy(User, { id });
  const insert = (user: User): Promise<void> => unitOfWork.transaction((m) => sut.insert(user, m));

  beforeEach(async () => {
    dataSource = await createInMemoryDataSource();
    const moduleRef = await Test.createTestingModule({
      providers: [
        { provide: DataSource, useValue: dataSource },
        UnitOfWork,
        UsersService,
        UserRepository,
        { provide: AccountStateCache, useValue: new AccountStateCache(false, () => 0) },
      ],
    }).compile();
    unitOfWork = moduleRef.get(UnitOfWork);
    sut = moduleRef.get(UsersService);
  });

  afterEach(async () => {
    await dataSource.destroy();
  });

  describe('insert', () => {
    it('should store every field of the user', async () => {
      const user = buildUser({ lockoutEnd: null, lastLoginAt: null });

      await insert(user);

      await expect(stored(user.id)).resolves.toEqual(user);
    });

    it('should refuse a second user with the same e-mail with a ConflictError', async () => {
      await insert(buildUser({ email: 'alice@example.com' }));

      const error = await rejectionOf(
        insert(buildUser({ email: 'alice@example.com', username: 'other' })),
      );

      expect(error).toBeInstanceOf(ConflictError);
      expect(error).toHaveProperty('message', 'Ya existe una cuenta con ese email.');
      await expect(dataSource.manager.countBy(User, {})).resolves.toBe(1);
    });

    it('should pass on a failure that is not a unique violation', async () => {
      const broken = buildUser({ username: null as unknown as string });

      const error = await rejectionOf(insert(broken));

      expect(error).toBeInstanceOf(QueryFailedError);
      expect(error).not.toBeInstanceOf(ConflictError);
    });

    it('should roll back with the transaction it runs in', async () => {
      const user = buildUser();

      await expect(
        unitOfWork.transaction(async (m) => {
          await sut.insert(user, m);
          throw new Error('issuing the tokens failed');
        }),
      ).rejects.toThrow('issuing the tokens failed');

      await expect(stored(user.id)).resolves.toBeNull();
    });
  });

  describe('findByEmail', () => {
    it('should find a user by the stored, normalised e-mail', async () => {
      const user = buildUser({ email: 'alice@example.com' });
      await insert(user);

      await expect(sut.findByEmail('alice@example.com')).resolves.toEqual(user);
    });

    it('should return null for an unknown e-mail', async () => {
      await insert(buildUser({ email: 'alice@example.com' }));

      await expect(sut.findByEmail('bob@example.com')).resolves.toBeNull();
    });
  });

  describe('findById', () => {
    it('should find a user by id, inside or outside a transaction', async () => {
      const user = buildUser();
      await insert(user);

      await expect(sut.findById(user.id)).resolves.toEqual(user);
      await expect(unitOfWork.transaction((m) => sut.findById(user.id, m))).resolves.toEqual(user);
      await expect(sut.findById(randomUUID())).resolves.toBeNull();
    });
  });

  describe('replaceLoginState', () => {
    it('should write the counter and the lockout end, leaving the other fields', async () => {
      const user = buildUser({ failedLoginAttempts: 4 });
      await insert(user);
      const lockoutEnd = new Date('2026-01-01T00:15:00.123Z');

      const written = await sut.replaceLoginState(user.id, user, {
        failedLoginAttempts: 5,
        lockoutEnd,
      });

      expect(written).toBe(true);
      await expect(stored(user.id)).resolves.toEqual({
        ...user,
        failedLoginAttempts: 5,
        lockoutEnd,
      });
    });

    it('should write lastLoginAt and a new password hash on success', async () => {
      const user = buildUser({
        failedLoginAttempts: 6,
        lockoutEnd: new Date('2026-01-01T00:15:00.000Z'),
      });
      await insert(user);
      const lastLoginAt = new Date('2026-01-02T03:04:05.678Z');
      const passwordHash = 'pbkdf2-sha256$600000$bmV3$a2V5';

      const written = await unitOfWork.transaction((m) =>
        sut.replaceLoginState(
          user.id,
          user,
          { failedLoginAttempts: 0, lockoutEnd: null, lastLoginAt, passwordHash },
          m,
        ),
      );

      expect(written).toBe(true);
      await expect(stored(user.id)).resolves.toEqual({
        ...user,
        failedLoginAttempts: 0,
        lockoutEnd: null,
        lastLoginAt,
        passwordHash,
      });
    });

    it.each([
      ['the counter moved', { failedLoginAttempts: 3, lockoutEnd: null }],
      [
        'a lockout started',
        { failedLoginAttempts: 4, lockoutEnd: new Date('2026-01-01T00:15:00.000Z') },
      ],
    ])(
      'should write nothing and say so when %s since the account was read',
      async (_case, seen) => {
        const user = buildUser({ failedLoginAttempts: 4, lockoutEnd: null });
        await insert(user);

        const written = await sut.replaceLoginState(user.id, seen, {
          failedLoginAttempts: 9,
          lockoutEnd: null,
        });

        expect(written).toBe(false);
        await expect(stored(user.id)).resolves.toEqual(user);
      },
    );

    it('should match a lockout end that is still the one that was read', async () => {
      const lockoutEnd = new Date('2026-01-01T00:15:00.000Z');
      const user = buildUser({ failedLoginAttempts: 5, lockoutEnd });
      await insert(user);

      const written = await sut.replaceLoginState(user.id, user, {
        failedLoginAttempts: 6,
        lockoutEnd: null,
      });

      expect(written).toBe(true);
      await expect(stored(user.id)).resolves.toEqual({
        ...user,
        failedLoginAttempts: 6,
        lockoutEnd: null,
      });
    });

    it('should only touch the given user', async () => {
      const alice = buildUser({ email: 'alice@example.com', failedLoginAttempts: 1 });
      const bob = buildUser({ email: 'bob@example.com', failedLoginAttempts: 1 });
      await insert(alice);
      await insert(bob);

      await sut.replaceLoginState(alice.id, alice, { failedLoginAttempts: 2, lockoutEnd: null });

      await expect(stored(bob.id)).resolves.toEqual(bob);
    });

    it('should write nothing when the user does not exist', async () => {
      await expect(
        sut.replaceLoginState(
          randomUUID(),
          { failedLoginAttempts: 0, lockoutEnd: null },
          { failedLoginAttempts: 1, lockoutEnd: null },
        ),
      ).resolves.toBe(false);
    });
  });

  describe('setActive', () => {
    it.each([
      ['deactivate an active account', true, false, true],
      ['activate a deactivated account', false, true, true],
      ['leave an already deactivated account as it is', false, false, false],
      ['leave an already active account as it is', true, true, false],
    ])('should %s', async (_case, isActive, next, changed) => {
      const user = buildUser({ isActive });
      const other = buildUser({ email: 'bob@example.com', isActive });
      await insert(user);
      await insert(other);

      await expect(sut.setActive(user.id, next)).resolves.toBe(changed);

      await expect(stored(user.id)).resolves.toEqual({ ...user, isActive: next });
      await expect(stored(other.id)).resolves.toEqual(other);
    });
  });

  describe('requireActiveAccount', () => {
    it("should return the state of an existing, active user's account, and only that", async () => {
      const user = buildUser({ lastLoginAt: new Date('2026-01-02T03:04:05.678Z') });
      await insert(user);

      const account = await sut.requireActiveAccount(user.id);

      // Exactly AccountState's columns: no password hash or login bookkeeping on the request.
      expect({ ...account }).toStrictEqual({
        id: user.id,
        username: user.username,
        email: user.email,
        isActive: true,
        createdAt: user.createdAt,
      });
    });

    it('should throw NotFoundError for an unknown user', async () => {
      const error = await rejectionOf(sut.requireActiveAccount(randomUUID()));
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error).toHaveProperty('message', 'Usuario no encontrado.');
    });

    it('should throw UnauthorizedError for a deactivated user', async () => {
      const user = buildUser({ isActive: false });
      await insert(user);
      const error = await rejectionOf(sut.requireActiveAccount(user.id));
      expect(error).toBeInstanceOf(UnauthorizedError);
      expect(error).toHaveProperty('message', 'Cuenta desactivada.');
    });
  });

  describe('profileOf', () => {
    it('should return only the public representation', () => {
      const user = buildUser({ username: 'alice', email: 'alice@example.com' });

      const profile = sut.profileOf(user);

      expect(profile).toEqual({
        id: user.id,
        username: 'alice',
        email: 'alice@example.com',
        createdAt: '2026-01-01T00:00:00.000Z',
      });
      expect(profile).not.toHaveProperty('passwordHash');
    });
  });
});
