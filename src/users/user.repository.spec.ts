import type { DataSource } from 'typeorm';
import { createInMemoryDataSource } from '../../test/utils/in-memory-database.js';
import { sqliteConnectionOf } from '../database/driver-handle.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { User } from './entities/user.entity.js';
import { UserRepository } from './user.repository.js';

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
      const user: User = {
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
      };
      await dataSource.getRepository(User).insert(user);
      const db = sqliteConnectionOf(dataSource);
      const sut = new UserRepository(new UnitOfWork(dataSource), dataSource);

      const typeorm = await dataSource.getRepository(User).findOneByOrFail({ id: user.id });

      expect(sut.findByIdOnSqlite(db, user.id)).toStrictEqual(typeorm);
      await expect(sut.findById(user.id)).resolves.toStrictEqual(typeorm);
      expect({ ...typeorm }).toEqual(user);
    },
  );
});
