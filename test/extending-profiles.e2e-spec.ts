import { MIGRATIONS } from '../src/database/migrations/index.js';
import { fromSqliteDatetime } from '../src/database/sqlite-datetime.js';
import { ProfilesService } from './extending-profiles/profiles.service.js';
import { PROFILES_EXTENSION } from './extending-profiles/profiles.module.js';
import { registerUser } from './factories/user.factory.js';
import { createTestApp, useTestApp, type TestApp } from './utils/create-test-app.js';
import { asInSource, codeShownFor } from './utils/page-code.js';
import { ME } from './utils/routes.js';
import { createTestDatabase } from './utils/test-database.js';

// The second "Extending" example of docs/development.md: a module that owns a table, with its
// entity, its migration and a listener of auth events, mounted as src/extensions.ts mounts it.
// On SQLite here, on PostgreSQL under `npm run test:pg`.

const MODULE_FILES = [
  'entities/profile.entity.ts',
  'migrations/1800000000000-CreateProfiles.ts',
  'profiles.service.ts',
  'profiles.module.ts',
];
const EXTENSIONS = [PROFILES_EXTENSION];
// The core's migrations (listed in timestamp order, as they run), then the extension's.
const CORE_MIGRATIONS = MIGRATIONS.map((migration) => migration.name);
const ALL_MIGRATIONS = [...CORE_MIGRATIONS, 'CreateProfiles1800000000000'];

interface ProfileRow {
  readonly userId: string;
  readonly displayName: string | null;
  readonly createdAt: string | Date;
}

async function profiles(t: TestApp): Promise<ProfileRow[]> {
  await t.app.get(ProfilesService).flush();
  const rows = await t.database.query<ProfileRow>(
    'SELECT "userId", "displayName", "createdAt" FROM profiles ORDER BY "createdAt"',
  );
  return rows.map((row) => ({
    ...row,
    createdAt: row.createdAt instanceof Date ? row.createdAt : fromSqliteDatetime(row.createdAt),
  }));
}

/** The migrations table in the order the migrations ran. */
async function appliedMigrations(t: TestApp): Promise<string[]> {
  const rows = await t.database.query<{ name: string }>('SELECT name FROM migrations ORDER BY id');
  return rows.map((row) => row.name);
}

describe('Extending: a module that owns a table', () => {
  it.each(MODULE_FILES)(
    'should be the code docs/development.md shows for src/profiles/%s',
    (file) => {
      expect(codeShownFor('docs/development.md', `src/profiles/${file}`)).toBe(
        asInSource('extending-profiles', file),
      );
    },
  );

  describe('mounted', () => {
    const t = useTestApp({ extensions: EXTENSIONS });

    it("should run its migration at start-up, after the core's", async () => {
      await expect(appliedMigrations(t)).resolves.toEqual(ALL_MIGRATIONS);
    });

    it('should write a profile row when someone registers', async () => {
      const user = await registerUser(t);

      await expect(profiles(t)).resolves.toEqual([
        { userId: user.id, displayName: null, createdAt: t.clock.now() },
      ]);
    });

    it('should lose the profile with the account', async () => {
      const user = await registerUser(t);
      await t.app.get(ProfilesService).flush();

      const response = await t.request(ME, {
        method: 'DELETE',
        body: JSON.stringify({ password: user.password }),
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${user.accessToken}`,
        },
      });

      expect(response.status).toBe(200);
      await expect(profiles(t)).resolves.toEqual([]);
    });
  });

  it('should run no migration twice when the service starts again', async () => {
    const database = await createTestDatabase();
    try {
      const first = await createTestApp({ database, extensions: EXTENSIONS });
      const user = await registerUser(first);
      await first.close();

      const second = await createTestApp({ database, extensions: EXTENSIONS });
      try {
        await expect(appliedMigrations(second)).resolves.toEqual(ALL_MIGRATIONS);
        await expect(profiles(second)).resolves.toEqual([
          expect.objectContaining({ userId: user.id }),
        ]);
      } finally {
        await second.close();
      }
    } finally {
      await database.drop();
    }
  });

  it('should add its table to a database the core already migrated', async () => {
    const database = await createTestDatabase();
    try {
      const coreOnly = await createTestApp({ database });
      const before = await appliedMigrations(coreOnly);
      await coreOnly.close();

      const extended = await createTestApp({ database, extensions: EXTENSIONS });
      try {
        expect(before).toEqual(CORE_MIGRATIONS);
        await expect(appliedMigrations(extended)).resolves.toEqual(ALL_MIGRATIONS);
      } finally {
        await extended.close();
      }
    } finally {
      await database.drop();
    }
  });
});
