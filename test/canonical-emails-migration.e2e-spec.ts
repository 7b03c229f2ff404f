import { jest } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_PASSWORD, registerUser, type RegisteredUser } from './factories/user.factory.js';
import { createTestApp, TEST_SECRET_KEY, type TestApp } from './utils/create-test-app.js';
import { createTestDatabase, type TestDatabase } from './utils/test-database.js';

const CLI_ENTRY = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const MIGRATION = 'CanonicalEmails1795392000000';

// Each test starts the application up to three times, and the CLI as a process.
jest.setTimeout(90_000);

/** `npm run cli -- <args>` on `database`, configured as the service is, from an empty folder. */
function cli(
  database: TestDatabase,
  args: readonly string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cwd = mkdtempSync(join(tmpdir(), 'keygate-cli-'));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_ENTRY, ...args], {
      cwd,
      env: {
        // eslint-disable-next-line no-restricted-syntax
        PATH: process.env.PATH ?? '',
        NO_COLOR: '1',
        Jwt__SecretKey: TEST_SECRET_KEY,
        ConnectionStrings__DefaultConnection: database.connectionString,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      rmSync(cwd, { recursive: true, force: true });
      resolve({ code, stdout, stderr });
    });
  });
}

describe('migration CanonicalEmails', () => {
  let database: TestDatabase;
  let t: TestApp | undefined;

  beforeEach(async () => {
    database = await createTestDatabase();
  });

  afterEach(async () => {
    await t?.close();
    t = undefined;
    await database.drop();
  });

  /** Registers accounts through the API, then gives them `legacy` addresses as older rows had. */
  async function legacyAccounts(legacy: readonly string[]): Promise<RegisteredUser[]> {
    const app = await createTestApp({ database });
    const users: RegisteredUser[] = [];
    for (const [index, email] of legacy.entries()) {
      const user = await registerUser(app, { email: `legacy${index}@placeholder.test` });
      await database.query('UPDATE users SET email = $1 WHERE id = $2', [email, user.id]);
      users.push(user);
    }
    await app.close();
    // As if the database predated the migration.
    await database.query('DELETE FROM migrations WHERE name = $1', [MIGRATION]);
    return users;
  }

  const emailOf = async (id: string): Promise<string> =>
    (await database.query<{ email: string }>('SELECT email FROM users WHERE id = $1', [id]))[0]
      .email;

  it('should bring every stored address to its canonical form, after which each variant logs in', async () => {
    const legacy = [
      'ｆｕｌｌ@ｗｉｄｔｈ.test',
      'jo@bücher.test',
      'straße@mail.test',
      'kate\u212A@mail.test',
      'plain@mail.test',
    ];
    const users = await legacyAccounts(legacy);

    t = await createTestApp({ database });

    const canonical = [
      'full@width.test',
      'jo@xn--bcher-kva.test',
      'strasse@mail.test',
      'katek@mail.test',
      'plain@mail.test',
    ];
    for (const [index, user] of users.entries()) {
      expect(await emailOf(user.id)).toBe(canonical[index]);
      for (const variant of [legacy[index], canonical[index]]) {
        const login = await t.post('/api/auth/login', {
          email: variant,
          password: DEFAULT_PASSWORD,
        });
        expect(login.status).toBe(200);
        expect(login.json<{ user: { email: string } }>().user.email).toBe(canonical[index]);
      }
    }
  });

  it('should stop on accounts that collide, naming ids but no address, and change nothing', async () => {
    const users = await legacyAccounts([
      'bob@mail.test',
      'ＢＯＢ@mail.test',
      'ann@mail.test',
      'carol@bücher.test',
      'carol@xn--bcher-kva.test',
    ]);

    const failure = await createTestApp({ database }).then(
      () => null,
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );

    expect(failure).toContain('4 accounts have e-mail addresses that are one address');
    expect(failure).toContain('2 group(s)');
    for (const user of [users[0], users[1], users[3], users[4]]) {
      expect(failure).toContain(user.id);
    }
    expect(failure).not.toContain(users[2].id);
    expect(failure).toContain('npm run cli -- users:email-collisions');
    expect(failure).not.toMatch(/bob|ＢＯＢ|carol|mail\.test|bücher|xn--/i);
    expect(await emailOf(users[1].id)).toBe('ＢＯＢ@mail.test');
    await expect(
      database.query('SELECT name FROM migrations WHERE name = $1', [MIGRATION]),
    ).resolves.toEqual([]);
  });

  it('should list the collisions with the admin CLI, which runs before the migration', async () => {
    const users = await legacyAccounts(['bob@mail.test', 'ＢＯＢ@mail.test', 'ann@mail.test']);

    const listed = await cli(database, ['users:email-collisions']);

    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('1 canonical address(es) belong to more than one account.');
    expect(listed.stdout).toContain('bob@mail.test (canonical form) is the address of 2 accounts:');
    expect(listed.stdout).toMatch(new RegExp(`user ${users[0].id}  bob@mail\\.test  created `));
    expect(listed.stdout).toMatch(
      new RegExp(`user ${users[1].id}  "ＢＯＢ@mail\\.test"  created `),
    );
    expect(listed.stdout).not.toContain(users[2].id);

    // Resolved by the operator: the migration then runs, and the CLI finds nothing.
    await database.query('UPDATE users SET email = $1 WHERE id = $2', [
      'bob2@mail.test',
      users[1].id,
    ]);
    t = await createTestApp({ database });
    expect(await emailOf(users[1].id)).toBe('bob2@mail.test');
    const after = await cli(database, ['users:email-collisions']);
    expect(after.stdout).toBe('No two accounts share an e-mail address in canonical form.\n');
  });
});
