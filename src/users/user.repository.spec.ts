import type { DataSource } from 'typeorm';
import { createInMemoryDataSource } from '../../test/utils/in-memory-database.js';
import { sqliteConnectionOf } from '../database/driver-handle.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { User } from './entities/user.entity.js';
import { ACCOUNT_STATE_COLUMNS, UserRepository } from './user.repository.js';

function buildUser(overrides: Partial<User> = {}): User {
  return Object.assign(new User(), {
    id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
    username: 'alice',
    email: 'alice@example.com',
    passwordHash: 'pbkdf2-sha256$1000$c2FsdA==$a2V5',
    failedLoginAttempts: 0,
    lockoutEnd: null,
    isActive: true,
    createdAt: new Date('2025-06-01T08:30:00.007Z'),
    lastLoginAt: null,
    emailVerifiedAt: null,
    ...overrides,
  });
}

describe(UserRepository.name, () => {
  let dataSource: DataSource;

  beforeEach(async () => {
    dataSource = await createInMemoryDataSource();
  });

  afterEach(async () => {
    await dataSource.destroy();
  });

  it.each<[string, Partial<User>]>([
    ['a fresh user', {}],
    [
      'a locked-out, deactivated user who has logged in',
      {
        failedLoginAttempts: 7,
        lockoutEnd: new Date('2026-01-01T00:15:00.123Z'),
        isActive: false,
        lastLoginAt: new Date('2025-12-31T23:59:59.999Z'),
        emailVerifiedAt: new Date('2025-06-01T08:45:00.500Z'),
      },
    ],
  ])(
    'should read %s by id exactly as TypeORM hydrates it, on its prepared statement',
    async (_case, overrides) => {
      const user = buildUser(overrides);
      await dataSource.getRepository(User).insert(user);
      const db = sqliteConnectionOf(dataSource);
      const sut = new UserRepository(new UnitOfWork(dataSource), dataSource);

      const typeorm = await dataSource.getRepository(User).findOneByOrFail({ id: user.id });

      expect(sut.findByIdOnSqlite(db, user.id)).toStrictEqual(typeorm);
      await expect(sut.findById(user.id)).resolves.toStrictEqual(typeorm);
      expect({ ...typeorm }).toEqual(user);
    },
  );

  it.each([true, false])(
    "should read an account's state (isActive %s) as TypeORM reads those columns, and no others",
    async (isActive) => {
      const user = buildUser({ isActive, lastLoginAt: new Date('2026-01-02T03:04:05.678Z') });
      await dataSource.getRepository(User).insert(user);
      const sut = new UserRepository(new UnitOfWork(dataSource), dataSource);

      const typeorm = await dataSource.getRepository(User).findOneOrFail({
        select: Object.fromEntries(ACCOUNT_STATE_COLUMNS.map((column) => [column, true])),
        where: { id: user.id },
      });
      const state = await sut.findAccountState(user.id);

      expect(state).toStrictEqual(
        Object.fromEntries(ACCOUNT_STATE_COLUMNS.map((column) => [column, typeorm[column]])),
      );
      expect(state).toStrictEqual({
        id: user.id,
        username: 'alice',
        email: 'alice@example.com',
        isActive,
        createdAt: user.createdAt,
      });
    },
  );

  it('should find no state for an account that does not exist', async () => {
    const sut = new UserRepository(new UnitOfWork(dataSource), dataSource);

    await expect(sut.findAccountState('3f2504e0-4f89-41d3-9a0c-0305e82c3399')).resolves.toBeNull();
  });
});
