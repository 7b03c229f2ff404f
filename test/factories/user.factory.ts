import { randomUUID } from 'node:crypto';
import { PasswordHasher } from '../../src/passwords/password-hasher.js';
import { User } from '../../src/users/entities/user.entity.js';
import type { TestApp } from '../utils/create-test-app.js';
import { REGISTER } from '../utils/routes.js';

export const DEFAULT_PASSWORD = 'S3cure!pass';

let sequence = 0;

/** A valid, unsaved user entity; the password hash is a placeholder unless overridden. */
export function buildUser(overrides: Partial<User> = {}): User {
  sequence += 1;
  return Object.assign(new User(), {
    id: randomUUID(),
    username: `user${sequence}`,
    email: `user${sequence}-${randomUUID().slice(0, 8)}@example.com`,
    passwordHash: 'not-a-real-hash',
    failedLoginAttempts: 0,
    lockoutEnd: null,
    isActive: true,
    createdAt: new Date('2026-01-01T00:00:00.000Z'),
    lastLoginAt: null,
    emailVerifiedAt: null,
    ...overrides,
  });
}

/** Persists a user whose password is `password` (hashed with the app's own hasher). */
export async function createUser(
  testApp: TestApp,
  overrides: Partial<User> = {},
  password = DEFAULT_PASSWORD,
): Promise<User> {
  const passwordHash = await testApp.app.get(PasswordHasher).hash(password);
  const user = buildUser({ passwordHash, ...overrides });
  await testApp.dataSource.getRepository(User).insert(user);
  return user;
}

/** Reads a user back from the database, as it is stored now. */
export async function reloadUser(testApp: TestApp, id: string): Promise<User> {
  return testApp.dataSource.getRepository(User).findOneByOrFail({ id });
}

export interface RegisteredUser {
  readonly username: string;
  readonly email: string;
  readonly password: string;
  readonly id: string;
  readonly accessToken: string;
  readonly refreshToken: string;
}

/** Registers a user through the API and returns its credentials and first token pair. */
export async function registerUser(
  testApp: TestApp,
  overrides: Partial<{ username: string; email: string; password: string }> = {},
): Promise<RegisteredUser> {
  sequence += 1;
  const body = {
    username: `user${sequence}`,
    email: `user${sequence}-${randomUUID().slice(0, 8)}@example.com`,
    password: DEFAULT_PASSWORD,
    ...overrides,
  };
  const response = await testApp.post(REGISTER, body);
  if (response.status !== 201) {
    throw new Error(`registerUser: expected 201, got ${response.status} ${response.text}`);
  }
  const json = response.json<{ accessToken: string; refreshToken: string; user: { id: string } }>();
  return {
    ...body,
    id: json.user.id,
    accessToken: json.accessToken,
    refreshToken: json.refreshToken,
  };
}
