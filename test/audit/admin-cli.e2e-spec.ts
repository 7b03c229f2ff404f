import { jest } from '@jest/globals';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createRefreshToken,
  findTokensOfUser,
  type TokenView,
} from '../factories/refresh-token.factory.js';
import {
  createUser,
  DEFAULT_PASSWORD,
  registerUser,
  reloadUser,
} from '../factories/user.factory.js';
import { CLI_ENTRY, runCliOn, runProcess as run, type CliRun } from '../utils/cli-process.js';
import { auditRows, refuseAuditInserts, type AuditRow } from '../utils/audit-rows.js';
import { TEST_SECRET_KEY, useTestApp } from '../utils/create-test-app.js';
import { authResponse, errorBody } from '../utils/expected-bodies.js';
import { FakeClock } from '../utils/fake-clock.js';
import { LOGIN, REFRESH, REGISTER } from '../utils/routes.js';
import { onPostgres } from '../utils/test-database.js';

/** The built CLI; `npx nest build` must have run first. */
const LAUNCHER = fileURLToPath(new URL('../../scripts/cli.mjs', import.meta.url));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CLI_USER_AGENT = /^keygate-cli \(.+@.+\)$/;
const DAY_MS = 24 * 60 * 60 * 1000;
const WRONG_PASSWORD = 'Wrong!pass1';
const COMMANDS = [
  'users:deactivate <email>',
  'users:activate <email>',
  'users:unlock <email>',
  'users:delete <email>',
  'users:mfa-reset <email>',
  'sessions:revoke-all <email>',
  'tokens:purge',
  'audit <email> [--limit N]',
];

// Every test starts real processes, some several; each boots Nest and opens the database.
jest.setTimeout(60_000);

describe('admin CLI', () => {
  // The CLI reads the real clock; each app starts there too, so both agree on what is expired.
  const t = useTestApp(() => ({ clock: new FakeClock(new Date()) }));
  let cwd: string;

  /** The CLI on the test app's database, configured through the environment as the service is. */
  const cli = (args: readonly string[], env: Record<string, string> = {}): Promise<CliRun> =>
    runCliOn(t.database, args, cwd, env);

  const rowsOf = (userId: string): Promise<AuditRow[]> => auditRows(t.database, userId);
  const cliRows = async (): Promise<AuditRow[]> =>
    (await auditRows(t.database)).filter((row) => row.ip === 'cli');
  const tokensOf = (userId: string): Promise<TokenView[]> => findTokensOfUser(t, userId);
  const login = (email: string, password = DEFAULT_PASSWORD) => t.post(LOGIN, { email, password });

  beforeEach(() => {
    cwd = mkdtempSync(join(tmpdir(), 'keygate-cli-'));
  });

  afterEach(() => {
    rmSync(cwd, { recursive: true, force: true });
  });

  describe('command line', () => {
    it.each([['--help'], ['-h']])(
      'should list every command and the exit codes with %s',
      async (flag) => {
        const result = await cli([flag]);

        expect(result.code).toBe(0);
        expect(result.stderr).toBe('');
        for (const command of COMMANDS) {
          expect(result.stdout).toContain(command);
        }
        expect(result.stdout).toContain('--limit N');
        expect(result.stdout).toContain('Exit codes: 0 done; 1 failed');
        expect(result.stdout).toContain('2 usage error');
      },
    );

    it.each([
      [[], 'No command given.'],
      [['users:nuke', 'a@example.com'], 'Unknown command "users:nuke".'],
      [['users:deactivate'], 'users:deactivate is missing an argument: users:deactivate <email>'],
      [
        ['sessions:revoke-all', 'a@example.com', 'b@example.com'],
        'sessions:revoke-all has too many arguments: sessions:revoke-all <email>',
      ],
      [['users:unlock', 'alice'], 'users:unlock expects an e-mail address, got "alice".'],
      [
        ['audit', 'a@example.com', '--limit', 'all'],
        '--limit must be a whole number from 1 to 1000, got "all".',
      ],
      [['tokens:purge', '--limit', '5'], '--limit applies only to audit, not to tokens:purge.'],
      [['users:activate', 'a@example.com', '--force'], "Unknown option '--force'."],
    ])('should exit 2 for %j and say why', async (args, message) => {
      const result = await cli(args);

      expect(result).toEqual({
        code: 2,
        stdout: '',
        stderr: `keygate-cli: ${message}\nRun with --help to see the commands.\n`,
      });
    });

    it.each(['users:deactivate', 'users:activate', 'users:unlock', 'sessions:revoke-all', 'audit'])(
      'should exit 1 for %s of an unknown account and change nothing',
      async (command) => {
        const user = await createUser(t);

        const result = await cli([command, 'Nobody@Example.com']);

        expect(result).toEqual({
          code: 1,
          stdout: '',
          stderr: `keygate-cli: ${command} failed: No account has the e-mail nobody@example.com.\n`,
        });
        expect(await reloadUser(t, user.id)).toEqual(user);
        expect(await auditRows(t.database)).toEqual([]);
      },
    );

    it('should exit 1 with the reason when the configuration is invalid', async () => {
      const result = await cli(['tokens:purge'], { Jwt__SecretKey: 'too-short' });

      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(
        /^keygate-cli: tokens:purge failed: Invalid configuration: Jwt__SecretKey must be longer than or equal to 32 characters\n$/,
      );
    });

    it('should exit 1 with the reason when the database cannot be used', async () => {
      let connectionString = join(cwd, 'not-a-database.db');
      writeFileSync(connectionString, 'this is not a SQLite file '.repeat(100));
      if (onPostgres) {
        const url = new URL(t.database.connectionString);
        url.pathname = '/keygate_no_such_database';
        connectionString = url.toString();
      }

      const result = await cli(['users:unlock', 'a@example.com'], {
        ConnectionStrings__DefaultConnection: connectionString,
      });

      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      const reason = onPostgres
        ? 'database "keygate_no_such_database" does not exist'
        : 'file is not a database';
      expect(result.stderr).toContain(`keygate-cli: users:unlock failed: ${reason}\n`);
    });

    it('should fail and change nothing when its audit event cannot be written', async () => {
      const user = await createUser(t, { isActive: false });
      const restore = await refuseAuditInserts(t.database);

      const result = await cli(['users:activate', user.email]);
      await restore();

      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain('keygate-cli: users:activate failed: ');
      expect(result.stderr).toContain('injected fault');
      expect((await reloadUser(t, user.id)).isActive).toBe(false);
      expect(await auditRows(t.database)).toEqual([]);
    });

    it('should read .env in its working directory, as the service does', async () => {
      const user = await createUser(t, { isActive: false });
      writeFileSync(
        join(cwd, '.env'),
        [
          `Jwt__SecretKey=${TEST_SECRET_KEY}`,
          `ConnectionStrings__DefaultConnection=${t.database.connectionString}`,
        ].join('\n'),
      );

      const result = await run(CLI_ENTRY, ['users:activate', user.email], cwd, {});

      expect(result.code).toBe(0);
      expect((await reloadUser(t, user.id)).isActive).toBe(true);
    });
  });

  describe('users:deactivate', () => {
    it('should deactivate the account and revoke every active refresh token of it', async () => {
      const registered = await registerUser(t);
      await login(registered.email);
      const last = (await login(registered.email)).json<{ refreshToken: string }>();
      const other = await registerUser(t);

      const result = await cli(['users:deactivate', `  ${registered.email.toUpperCase()} `]);

      expect(result).toEqual({
        code: 0,
        stdout: `Deactivated ${registered.email} (user ${registered.id}); revoked 3 refresh token(s).\n`,
        stderr: '',
      });
      expect((await reloadUser(t, registered.id)).isActive).toBe(false);
      const tokens = await tokensOf(registered.id);
      expect(tokens).toHaveLength(3);
      for (const token of tokens) {
        expect(token).toMatchObject({
          isRevoked: true,
          revokedByIp: 'cli',
          reasonRevoked: 'Account deactivated by an administrator',
        });
      }
      expect((await tokensOf(other.id)).map((token) => token.isRevoked)).toEqual([false]);
      expect((await login(registered.email)).json()).toEqual(errorBody(401, 'Cuenta desactivada.'));
      expect((await t.post(REFRESH, { refreshToken: last.refreshToken })).json()).toEqual(
        errorBody(401, 'Refresh token revocado.'),
      );

      const [deactivated, revoked] = (await rowsOf(registered.id)).filter(
        (row) => row.ip === 'cli',
      );
      expect(deactivated).toEqual(
        expect.objectContaining({
          type: 'admin_user_deactivated',
          userAgent: expect.stringMatching(CLI_USER_AGENT),
          requestId: expect.stringMatching(UUID),
          details: { changed: true },
        }),
      );
      expect(revoked).toEqual(
        expect.objectContaining({
          type: 'sessions_revoked',
          requestId: deactivated.requestId,
          details: {
            keepFamilyId: null,
            endedSessionIds: expect.arrayContaining(tokens.map((token) => token.familyId)),
          },
        }),
      );
    });

    it('should say so when the account already is deactivated, and record it', async () => {
      const user = await createUser(t, { isActive: false });

      const result = await cli(['users:deactivate', user.email]);

      expect(result.code).toBe(0);
      expect(result.stdout).toBe(
        `${user.email} (user ${user.id}) was already deactivated; revoked 0 refresh token(s).\n`,
      );
      expect((await cliRows()).map((row) => [row.type, row.details])).toEqual([
        ['admin_user_deactivated', { changed: false }],
        ['sessions_revoked', { keepFamilyId: null, endedSessionIds: [] }],
      ]);
    });
  });

  describe('users:activate', () => {
    it('should let a deactivated account log in again', async () => {
      const user = await createUser(t, { isActive: false });

      const result = await cli(['users:activate', user.email]);

      expect(result).toEqual({
        code: 0,
        stdout: `Activated ${user.email} (user ${user.id}).\n`,
        stderr: '',
      });
      expect((await reloadUser(t, user.id)).isActive).toBe(true);
      const loggedIn = await login(user.email);
      expect(loggedIn.status).toBe(200);
      expect(loggedIn.json()).toEqual(authResponse(user));
      expect(await cliRows()).toEqual([
        expect.objectContaining({
          type: 'admin_user_activated',
          userId: user.id,
          userAgent: expect.stringMatching(CLI_USER_AGENT),
          requestId: expect.stringMatching(UUID),
          details: { changed: true },
        }),
      ]);
    });

    it('should say so when the account already is active', async () => {
      const user = await createUser(t);

      const result = await cli(['users:activate', user.email]);

      expect(result.code).toBe(0);
      expect(result.stdout).toBe(`${user.email} (user ${user.id}) was already active.\n`);
      expect((await cliRows()).map((row) => row.details)).toEqual([{ changed: false }]);
    });
  });

  describe('users:unlock', () => {
    it('should clear the counter and the lockout, so the right password works at once', async () => {
      const user = await createUser(t);
      for (let attempt = 0; attempt < 5; attempt += 1) {
        await login(user.email, WRONG_PASSWORD);
      }
      const lockedUntil = (await reloadUser(t, user.id)).lockoutEnd;
      expect(lockedUntil).not.toBeNull();
      expect((await login(user.email)).status).toBe(401);

      const result = await cli(['users:unlock', user.email]);

      expect(result).toEqual({
        code: 0,
        stdout:
          `Unlocked ${user.email} (user ${user.id}): cleared 5 failed login(s) and the lockout ` +
          `until ${lockedUntil?.toISOString()}.\n`,
        stderr: '',
      });
      expect(await reloadUser(t, user.id)).toMatchObject({
        failedLoginAttempts: 0,
        lockoutEnd: null,
      });
      expect((await login(user.email)).status).toBe(200);
      expect(await cliRows()).toEqual([
        expect.objectContaining({
          type: 'admin_user_unlocked',
          userId: user.id,
          details: { failedAttempts: 5, lockedUntil: lockedUntil?.toISOString() },
        }),
      ]);
    });

    it('should say so when there is nothing to clear', async () => {
      const user = await createUser(t);

      const result = await cli(['users:unlock', user.email]);

      expect(result.code).toBe(0);
      expect(result.stdout).toBe(
        `${user.email} (user ${user.id}) had no failed logins or lockout to clear.\n`,
      );
      expect((await cliRows()).map((row) => row.type)).toEqual(['admin_user_unlocked']);
    });
  });

  describe('users:delete', () => {
    it('should delete the account and its tokens, keeping only pseudonymous audit rows', async () => {
      const registered = await registerUser(t);
      const other = await registerUser(t);

      const result = await cli(['users:delete', `  ${registered.email.toUpperCase()} `]);

      expect(result).toEqual({
        code: 0,
        stdout:
          `Deleted ${registered.email} (user ${registered.id}), its refresh tokens, ` +
          'mailed-link tokens and unsent mail.\n',
        stderr: '',
      });
      expect(await tokensOf(registered.id)).toEqual([]);
      expect((await login(registered.email)).json()).toEqual(
        errorBody(401, 'Credenciales inválidas.'),
      );
      expect((await login(other.email)).status).toBe(200);
      const rows = await rowsOf(registered.id);
      expect(rows.map((row) => row.type)).toEqual(['registered', 'admin_user_deleted']);
      expect(JSON.stringify(rows)).not.toContain(registered.email);
    });

    it('should exit 1 and change nothing for an unknown account', async () => {
      const result = await cli(['users:delete', 'nobody@example.com']);

      expect(result).toEqual({
        code: 1,
        stdout: '',
        stderr: 'keygate-cli: users:delete failed: No account has the e-mail nobody@example.com.\n',
      });
    });
  });

  describe('sessions:revoke-all', () => {
    it("should revoke every active refresh token of the account and no one else's", async () => {
      const registered = await registerUser(t);
      await login(registered.email);
      const other = await registerUser(t);

      const result = await cli(['sessions:revoke-all', registered.email]);

      expect(result).toEqual({
        code: 0,
        stdout: `Revoked 2 refresh token(s) of ${registered.email} (user ${registered.id}).\n`,
        stderr: '',
      });
      const tokens = await tokensOf(registered.id);
      expect(tokens.map((token) => [token.isRevoked, token.reasonRevoked])).toEqual([
        [true, 'Sessions revoked by an administrator'],
        [true, 'Sessions revoked by an administrator'],
      ]);
      expect((await tokensOf(other.id)).map((token) => token.isRevoked)).toEqual([false]);
      expect((await login(registered.email)).status).toBe(200);

      const [revoked, admin] = await cliRows();
      expect(revoked).toEqual(
        expect.objectContaining({
          type: 'sessions_revoked',
          userId: registered.id,
          details: {
            keepFamilyId: null,
            endedSessionIds: expect.arrayContaining(tokens.map((token) => token.familyId)),
          },
        }),
      );
      expect(admin).toEqual(
        expect.objectContaining({
          type: 'admin_sessions_revoked',
          userId: registered.id,
          requestId: revoked.requestId,
          details: { revokedTokenCount: 2 },
        }),
      );
    });
  });

  describe('tokens:purge', () => {
    it('should delete the tokens expired longer ago than the retention, as configured', async () => {
      const user = await createUser(t);
      const now = t.clock.now().getTime();
      const expiredAgo = (days: number) => ({ expiresAt: new Date(now - days * DAY_MS) });
      await createRefreshToken(t, user.id, expiredAgo(30));
      await createRefreshToken(t, user.id, expiredAgo(8));
      const { token: recentlyExpired } = await createRefreshToken(t, user.id, expiredAgo(1));
      const { token: active } = await createRefreshToken(t, user.id);

      const first = await cli(['tokens:purge']);

      expect(first).toEqual({
        code: 0,
        stdout: 'Deleted 2 expired refresh token(s).\n',
        stderr: '',
      });
      expect((await tokensOf(user.id)).map((token) => token.id).sort()).toEqual(
        [recentlyExpired.id, active.id].sort(),
      );

      const second = await cli(['tokens:purge'], { TokenCleanup__RetentionDays: '0' });

      expect(second.stdout).toBe('Deleted 1 expired refresh token(s).\n');
      expect((await tokensOf(user.id)).map((token) => token.id)).toEqual([active.id]);
      expect((await cliRows()).map((row) => [row.type, row.userId, row.details])).toEqual([
        ['admin_tokens_purged', null, { deletedCount: 2 }],
        ['admin_tokens_purged', null, { deletedCount: 1 }],
      ]);
    });
  });

  describe('audit', () => {
    it('should show the newest events of the account first, up to --limit', async () => {
      // An hour ago, so that the CLI's own events, at the real time, are the newest.
      t.clock.set(new Date(Date.now() - 60 * 60_000));
      const send = (path: string, body: unknown, requestId: string) => {
        t.clock.advance(60_000);
        return t.request(path, {
          method: 'POST',
          body: JSON.stringify(body),
          headers: {
            'content-type': 'application/json',
            'x-request-id': requestId,
            'user-agent': 'Audit Browser/2.0',
          },
        });
      };
      const email = 'carol@example.com';
      const registered = await send(
        REGISTER,
        { username: 'carol', email, password: DEFAULT_PASSWORD },
        'r-1',
      );
      const userId = registered.json<{ user: { id: string } }>().user.id;
      await send(LOGIN, { email, password: WRONG_PASSWORD }, 'r-2');
      const loggedIn = await send(LOGIN, { email, password: DEFAULT_PASSWORD }, 'r-3');
      const { refreshToken } = loggedIn.json<{ refreshToken: string }>();
      await send(REFRESH, { refreshToken }, 'r-4');

      const all = await cli(['audit', 'Carol@Example.com']);

      expect(all.code).toBe(0);
      expect(all.stderr).toBe('');
      const lines = all.stdout.trimEnd().split('\n');
      expect(lines[0]).toBe(`Audit trail of ${email} (user ${userId}): 4 event(s), newest first.`);
      expect(lines[1]).toBe('');
      expect(lines[2]).toMatch(/^TIME +EVENT +IP +REQUEST ID +DETAILS$/);
      const events = lines.slice(3).map((line) => line.split(/ {2,}/));
      expect(events.map(([, type, ip, requestId]) => [type, ip, requestId])).toEqual([
        ['token_refreshed', '127.0.0.1', 'r-4'],
        ['login_succeeded', '127.0.0.1', 'r-3'],
        ['login_failed', '127.0.0.1', 'r-2'],
        ['registered', '127.0.0.1', 'r-1'],
      ]);
      const times = events.map(([time]) => time);
      expect([...times].sort().reverse()).toEqual(times);
      expect(events[2][4]).toBe('reason=bad_password userAgent="Audit Browser/2.0"');
      expect(events[0][4]).toMatch(
        /^familyId=[0-9a-f-]{36} generation=0 userAgent="Audit Browser\/2.0"$/,
      );

      const limited = await cli(['audit', email, '--limit', '2']);

      expect(limited.code).toBe(0);
      const newest = limited.stdout.trimEnd().split('\n').slice(3);
      expect(newest).toHaveLength(2);
      expect(newest[0]).toMatch(
        /^\S+ +admin_audit_viewed +cli +[0-9a-f-]{36} +rowCount=4 userAgent="keygate-cli \(.+@.+\)"$/,
      );
      expect(newest[1]).toContain(' token_refreshed ');
    });

    it('should say so when the account has no events', async () => {
      const user = await createUser(t);

      const result = await cli(['audit', user.email]);

      expect(result).toEqual({
        code: 0,
        stdout: `No audit events for ${user.email} (user ${user.id}).\n`,
        stderr: '',
      });
      expect((await cliRows()).map((row) => [row.type, row.details])).toEqual([
        ['admin_audit_viewed', { rowCount: 0 }],
      ]);
    });
  });

  describe('npm run cli (scripts/cli.mjs)', () => {
    it('should run the built CLI', async () => {
      const result = await run(LAUNCHER, ['--help'], cwd, {});

      expect(result.code).toBe(0);
      expect(result.stdout).toContain('users:deactivate <email>');
    });

    it('should say what to do when there is no build and nothing to build it with', async () => {
      mkdirSync(join(cwd, 'scripts'));
      copyFileSync(LAUNCHER, join(cwd, 'scripts', 'cli.mjs'));

      const result = await run(join(cwd, 'scripts', 'cli.mjs'), ['--help'], cwd, {});

      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain('dist/cli.js is missing');
      expect(result.stderr).toContain('run `npm run build`');
    });
  });
});
