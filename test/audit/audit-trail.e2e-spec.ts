import { toAuditEntries } from '../../src/audit/audit-row.js';
import { AuditEvent } from '../../src/audit/entities/audit-event.entity.js';
import { eventIdBytes } from '../../src/audit/event-id.js';
import { UserAgentRepository } from '../../src/audit/user-agent.repository.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { RandomSource } from '../../src/common/random/random-source.js';
import { internalOrigin } from '../../src/common/request-origin/request-origin.js';
import { RefreshToken } from '../../src/tokens/entities/refresh-token.entity.js';
import { TokensService } from '../../src/tokens/tokens.service.js';
import { findRefreshToken } from '../factories/refresh-token.factory.js';
import { createUser, DEFAULT_PASSWORD, registerUser } from '../factories/user.factory.js';
import {
  auditRows,
  auditTableText,
  refuseAuditInserts,
  type AuditRow,
} from '../utils/audit-rows.js';
import { TEST_SECRET_KEY, type TestResponse, useTestApp } from '../utils/create-test-app.js';
import { errorBody } from '../utils/expected-bodies.js';
import { LOGIN, REFRESH, REGISTER, REVOKE } from '../utils/routes.js';
import { startServer, stopAllServers, waitForExit } from '../utils/spawn-server.js';
import { createTestDatabase, describeOnPostgres } from '../utils/test-database.js';

const USER_AGENT = 'audit-e2e/1.0 (+https://example.com/bot)';
const WRONG_PASSWORD = 'Wrong!pass1';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MINUTE_MS = 60_000;

/** The origin columns every row of a request sent by `send` carries. */
function fromRequest(requestId: string): Partial<AuditRow> {
  return { ip: '127.0.0.1', userAgent: USER_AGENT, requestId };
}

describe('audit trail', () => {
  const t = useTestApp();

  /** POSTs JSON with a user agent and the given X-Request-Id. */
  const send = (
    path: string,
    body: unknown,
    requestId: string,
    accessToken?: string,
  ): Promise<TestResponse> =>
    t.request(path, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'x-request-id': requestId,
        ...(accessToken === undefined ? {} : { authorization: `Bearer ${accessToken}` }),
      },
    });

  /** The rows committed so far: an answer leaves only once its event's row committed. */
  const rows = (userId?: string): Promise<AuditRow[]> => auditRows(t.database, userId);

  it('should record a registration with the client, its request id and the time', async () => {
    const response = await send(
      REGISTER,
      { username: 'alice', email: 'Alice@Example.com', password: DEFAULT_PASSWORD },
      'req-register-1',
    );
    expect(response.status).toBe(201);
    const { user, refreshToken } = response.json<{ user: { id: string }; refreshToken: string }>();

    const token = await findRefreshToken(t, refreshToken);
    expect(await rows()).toEqual([
      {
        id: expect.stringMatching(UUID),
        occurredAt: t.clock.now(),
        type: 'registered',
        userId: user.id,
        email: null,
        ...fromRequest('req-register-1'),
        details: { familyId: token?.familyId },
      },
    ]);
  });

  it('should write rows that TypeORM reads back exactly as they were told', async () => {
    const response = await send(
      REGISTER,
      { username: 'alice', email: 'alice@example.com', password: DEFAULT_PASSWORD },
      'req-read-back',
    );
    const [raw] = await rows(response.json<{ user: { id: string } }>().user.id);

    const entity = await t.dataSource
      .getRepository(AuditEvent)
      .findOneByOrFail({ id: eventIdBytes(raw.id) });
    const [entry] = await toAuditEntries([entity], t.app.get(UserAgentRepository));

    expect(entry).toEqual(raw);
    expect(entry.occurredAt).toEqual(t.clock.now());
  });

  it('should record a successful login with the family it started', async () => {
    const user = await createUser(t);
    t.clock.advance(MINUTE_MS);

    const response = await send(
      LOGIN,
      { email: user.email, password: DEFAULT_PASSWORD },
      'req-login-ok',
    );
    expect(response.status).toBe(200);

    const token = await findRefreshToken(t, response.json<{ refreshToken: string }>().refreshToken);
    expect(await rows()).toEqual([
      expect.objectContaining({
        occurredAt: t.clock.now(),
        type: 'login_succeeded',
        userId: user.id,
        email: null,
        ...fromRequest('req-login-ok'),
        details: { familyId: token?.familyId },
      }),
    ]);
  });

  it('should record each kind of refused login with its reason', async () => {
    const active = await createUser(t);
    const deactivated = await createUser(t, { isActive: false });
    const locked = await createUser(t, {
      failedLoginAttempts: 5,
      lockoutEnd: new Date(t.clock.now().getTime() + 10 * MINUTE_MS),
    });
    const attempts: [string, string, string][] = [
      ['req-unknown', '  Nobody@Example.com ', DEFAULT_PASSWORD],
      ['req-bad-password', active.email, WRONG_PASSWORD],
      ['req-deactivated', deactivated.email, DEFAULT_PASSWORD],
      ['req-locked', locked.email, DEFAULT_PASSWORD],
    ];
    for (const [requestId, email, password] of attempts) {
      const response = await send(LOGIN, { email, password }, requestId);
      expect(response.status).toBe(401);
    }

    const failed = (requestId: string, userId: string | null, reason: string): unknown =>
      expect.objectContaining({
        type: 'login_failed',
        userId,
        email: userId === null ? 'nobody@example.com' : null,
        ...fromRequest(requestId),
        details: { reason },
      });
    expect(await rows()).toEqual([
      failed('req-unknown', null, 'unknown_email'),
      failed('req-bad-password', active.id, 'bad_password'),
      failed('req-deactivated', deactivated.id, 'deactivated'),
      failed('req-locked', locked.id, 'locked'),
    ]);
  });

  it('should not keep a password typed into the e-mail field', async () => {
    const response = await send(
      LOGIN,
      { email: 'Typed!My!Password9', password: DEFAULT_PASSWORD },
      'req-typo',
    );
    expect(response.status).toBe(401);

    expect(await rows()).toEqual([
      expect.objectContaining({ type: 'login_failed', userId: null, email: null }),
    ]);
    expect(await auditTableText(t.database)).not.toContain('Typed!My!Password9');
  });

  it('should record the lockout after the fifth wrong password, with its end', async () => {
    const user = await createUser(t);

    for (let attempt = 1; attempt <= 5; attempt += 1) {
      const response = await send(
        LOGIN,
        { email: user.email, password: WRONG_PASSWORD },
        `req-wrong-${attempt}`,
      );
      expect(response.status).toBe(401);
    }

    const recorded = await rows(user.id);
    expect(recorded.map((row) => [row.type, row.requestId])).toEqual([
      ['login_failed', 'req-wrong-1'],
      ['login_failed', 'req-wrong-2'],
      ['login_failed', 'req-wrong-3'],
      ['login_failed', 'req-wrong-4'],
      ['lockout_started', 'req-wrong-5'],
      ['login_failed', 'req-wrong-5'],
    ]);
    expect(recorded[4]).toEqual(
      expect.objectContaining({
        ...fromRequest('req-wrong-5'),
        details: {
          failedAttempts: 5,
          lockedUntil: new Date(t.clock.now().getTime() + 15 * MINUTE_MS).toISOString(),
        },
      }),
    );
  });

  it('should record a rotation with the session and the generation of the token it replaced', async () => {
    const registered = await registerUser(t);
    t.clock.advance(MINUTE_MS);

    const response = await send(REFRESH, { refreshToken: registered.refreshToken }, 'req-refresh');
    expect(response.status).toBe(200);

    const old = await findRefreshToken(t, registered.refreshToken);
    const next = await findRefreshToken(t, response.json<{ refreshToken: string }>().refreshToken);
    expect(next).toMatchObject({ familyId: old?.familyId, generation: 1 });
    expect((await rows(registered.id)).at(-1)).toEqual(
      expect.objectContaining({
        occurredAt: t.clock.now(),
        type: 'token_refreshed',
        ...fromRequest('req-refresh'),
        details: { familyId: old?.familyId, generation: 0 },
      }),
    );
  });

  it('should record reuse detection with the session it ended', async () => {
    const registered = await registerUser(t);
    const rotated = await send(REFRESH, { refreshToken: registered.refreshToken }, 'req-rotate');
    expect(rotated.status).toBe(200);

    const replay = await send(REFRESH, { refreshToken: registered.refreshToken }, 'req-replay');
    expect(replay.json()).toEqual(errorBody(401, 'Refresh token revocado.'));

    const first = await findRefreshToken(t, registered.refreshToken);
    expect((await rows(registered.id)).at(-1)).toEqual(
      expect.objectContaining({
        type: 'reuse_detected',
        ...fromRequest('req-replay'),
        details: { familyId: first?.familyId, generation: 0, sessionEnded: true },
      }),
    );
  });

  it('should record a revocation', async () => {
    const registered = await registerUser(t);

    const response = await send(
      REVOKE,
      { refreshToken: registered.refreshToken, reason: 'logout' },
      'req-revoke',
      registered.accessToken,
    );
    expect(response.status).toBe(200);

    const token = await findRefreshToken(t, registered.refreshToken);
    expect((await rows(registered.id)).at(-1)).toEqual(
      expect.objectContaining({
        type: 'token_revoked',
        ...fromRequest('req-revoke'),
        details: { familyId: token?.familyId, generation: 0, sessionEnded: true },
      }),
    );
  });

  it('should record a refused refresh, with no user for an unknown token', async () => {
    const response = await send(REFRESH, { refreshToken: 'x'.repeat(43) }, 'req-bad');
    expect(response.json()).toEqual(errorBody(401, 'Refresh token inválido.'));

    expect(await rows()).toEqual([
      expect.objectContaining({
        type: 'refresh_failed',
        userId: null,
        ...fromRequest('req-bad'),
        details: { reason: 'invalid' },
      }),
    ]);
  });

  it('should record the end of all sessions of a user, with the tokens revoked', async () => {
    const registered = await registerUser(t);
    const origin = internalOrigin('maintenance', t.app.get(RandomSource));

    const revoked = await t.app
      .get(TokensService)
      .revokeAll(registered.id, origin, { reason: 'Password changed' });

    expect((await rows(registered.id)).at(-1)).toEqual(
      expect.objectContaining({
        type: 'sessions_revoked',
        ip: 'maintenance',
        userAgent: null,
        requestId: origin.requestId,
        details: { keepFamilyId: null, endedSessionIds: revoked.sessionIds },
      }),
    );
    expect(revoked.sessionIds).toHaveLength(1);
  });

  it.each([
    ['no X-Request-Id', undefined],
    ['an X-Request-Id with spaces', 'not tame'],
  ])('should record a request id of its own when the client sent %s', async (_case, header) => {
    const response = await t.request(REFRESH, {
      method: 'POST',
      body: JSON.stringify({ refreshToken: 'x'.repeat(43) }),
      headers: {
        'content-type': 'application/json',
        ...(header === undefined ? {} : { 'x-request-id': header }),
      },
    });
    expect(response.status).toBe(401);

    const [row] = await rows();
    expect(row.requestId).toMatch(UUID);
    expect(row.userAgent).toBe('node');
  });

  it('should never store a password, a token or a token hash', async () => {
    const registered = await registerUser(t);
    await send(LOGIN, { email: registered.email, password: WRONG_PASSWORD }, 'r1');
    const login = await send(LOGIN, { email: registered.email, password: DEFAULT_PASSWORD }, 'r2');
    const { refreshToken, accessToken } = login.json<{
      refreshToken: string;
      accessToken: string;
    }>();
    const rotated = await send(REFRESH, { refreshToken }, 'r3');
    const latest = rotated.json<{ refreshToken: string; accessToken: string }>();
    await send(REFRESH, { refreshToken }, 'r4');
    await send(REVOKE, { refreshToken: latest.refreshToken }, 'r5', latest.accessToken);

    const text = await auditTableText(t.database);
    // Digests are bytes: neither their hex nor their base64 may appear.
    const hashes = (await t.dataSource.getRepository(RefreshToken).find()).flatMap((r) => [
      r.tokenHash.toString('hex'),
      r.tokenHash.toString('base64'),
    ]);
    const [{ passwordHash }] = await t.database.query<{ passwordHash: string }>(
      'SELECT "passwordHash" FROM "users"',
    );
    expect((await rows()).length).toBeGreaterThanOrEqual(6);
    for (const secret of [
      DEFAULT_PASSWORD,
      WRONG_PASSWORD,
      registered.refreshToken,
      registered.accessToken,
      refreshToken,
      accessToken,
      latest.refreshToken,
      latest.accessToken,
      passwordHash,
      ...hashes,
    ]) {
      expect(text).not.toContain(secret);
    }
  });

  it('should refuse to update or delete a row, in the database itself', async () => {
    // Inside the retention window by the database's own clock, whatever the date of the run.
    t.clock.set(new Date());
    await registerUser(t);
    const before = await rows();
    expect(before.map((row) => row.type)).toEqual(['registered']);

    const refusals: string[] = [];
    for (const sql of [
      `UPDATE auth_events SET "type" = 'tampered'`,
      `UPDATE auth_events SET "userId" = NULL WHERE "type" = 'registered'`,
      'DELETE FROM auth_events',
      `DELETE FROM auth_events WHERE "type" = 'registered'`,
    ]) {
      // Caught by hand: the SQLite driver's error may come from another realm than Jest's Error,
      // which `rejects.toThrow` does not always recognise.
      try {
        await t.database.query(sql);
        refusals.push(`accepted: ${sql}`);
      } catch (error: unknown) {
        refusals.push((error as { message?: unknown }).message as string);
      }
    }
    expect(refusals).toEqual(Array(4).fill('auth_events is append-only'));

    expect(await rows()).toEqual(before);
  });

  describeOnPostgres('on PostgreSQL', () => {
    it('should refuse to truncate the table', async () => {
      await registerUser(t);

      await expect(t.database.query('TRUNCATE auth_events')).rejects.toThrow(
        'auth_events is append-only',
      );

      expect(await rows()).toHaveLength(1);
    });

    /**
     * Makes the schema's user-agent look-up (migration 1797000000100) fail when called, keeping
     * the function itself (its id, which prepared statements refer to). Returns the undo.
     */
    const failUserAgentLookUps = async (): Promise<() => Promise<void>> => {
      const [{ definition }] = await t.database.query<{ definition: string }>(
        "SELECT pg_get_functiondef(p.oid) AS definition FROM pg_proc p WHERE p.proname = 'keygate_user_agent_id' AND p.pronamespace = current_schema()::regnamespace",
      );
      await t.database.query(
        'CREATE OR REPLACE FUNCTION keygate_user_agent_id(agent varchar) RETURNS integer ' +
          "LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'user agent looked up'; END $$",
      );
      return async () => {
        await t.database.query(definition);
      };
    };

    it('should look a user agent up in a rotation only until one of its rotations committed, and never without one', async () => {
      const registered = await send(
        REGISTER,
        { username: 'dave', email: 'dave@example.com', password: DEFAULT_PASSWORD },
        'req-known-1',
      );
      let { refreshToken } = registered.json<{ refreshToken: string }>();
      const refresh = async (requestId: string, userAgent: string): Promise<TestResponse> => {
        const answer = await t.request(REFRESH, {
          method: 'POST',
          body: JSON.stringify({ refreshToken }),
          headers: {
            'content-type': 'application/json',
            'user-agent': userAgent,
            'x-request-id': requestId,
          },
        });
        if (answer.status === 200) {
          refreshToken = answer.json<{ refreshToken: string }>().refreshToken;
        }
        return answer;
      };
      // The first rotation from USER_AGENT looks it up; its id is remembered once it committed.
      expect((await refresh('req-known-2', USER_AGENT)).status).toBe(200);
      const restore = await failUserAgentLookUps();

      const answers = [
        await refresh('req-known-3', USER_AGENT),
        await refresh('req-known-4', ''),
        await refresh('req-known-5', 'unknown-client/1.0'),
      ];
      await restore();

      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 500]);
      expect(answers[2].json()).toEqual(errorBody(500, 'Ocurrió un error interno.'));
      expect((await rows()).map((row) => [row.type, row.requestId, row.userAgent])).toEqual([
        ['registered', 'req-known-1', USER_AGENT],
        ['token_refreshed', 'req-known-2', USER_AGENT],
        ['token_refreshed', 'req-known-3', USER_AGENT],
        ['token_refreshed', 'req-known-4', null],
      ]);
    });

    it('should not remember the user agent of a rotation that rolled back', async () => {
      const registered = await send(
        REGISTER,
        { username: 'erin', email: 'erin@example.com', password: DEFAULT_PASSWORD },
        'req-rollback-1',
      );
      const { refreshToken } = registered.json<{ refreshToken: string }>();
      const refresh = (requestId: string): Promise<TestResponse> =>
        t.request(REFRESH, {
          method: 'POST',
          body: JSON.stringify({ refreshToken }),
          headers: {
            'content-type': 'application/json',
            'user-agent': 'rolled-back/1.0',
            'x-request-id': requestId,
          },
        });
      // The rotation adds the user agent's row, then its audit row is refused: all rolls back.
      const restore = await refuseAuditInserts(t.database);
      const refused = await refresh('req-rollback-2');
      await restore();

      const accepted = await refresh('req-rollback-3');

      expect([refused.status, accepted.status]).toEqual([500, 200]);
      expect((await rows()).map((row) => [row.requestId, row.userAgent])).toEqual([
        ['req-rollback-1', USER_AGENT],
        ['req-rollback-3', 'rolled-back/1.0'],
      ]);
    });
  });

  it('should refuse each change with the 500 body and keep its state when its audit row cannot be written', async () => {
    const user = await createUser(t);
    const session = await send(LOGIN, { email: user.email, password: DEFAULT_PASSWORD }, 'r0');
    const { refreshToken } = session.json<{ refreshToken: string }>();
    const before = {
      users: await t.database.query('SELECT * FROM users ORDER BY id'),
      sessions: await t.database.query('SELECT * FROM sessions ORDER BY id'),
      tokens: await t.database.query(
        'SELECT * FROM refresh_tokens ORDER BY "sessionId", generation',
      ),
    };
    const trailBefore = await rows();
    const restore = await refuseAuditInserts(t.database);

    const answers = [
      await send(
        REGISTER,
        { username: 'bob', email: 'bob@example.com', password: DEFAULT_PASSWORD },
        'req-refused-1',
      ),
      await send(LOGIN, { email: user.email, password: DEFAULT_PASSWORD }, 'req-refused-2'),
      await send(LOGIN, { email: user.email, password: WRONG_PASSWORD }, 'req-refused-3'),
      await send(LOGIN, { email: 'nobody@example.com', password: WRONG_PASSWORD }, 'req-refused-4'),
      await send(REFRESH, { refreshToken }, 'req-refused-5'),
      await send(REFRESH, { refreshToken: 'not-a-token' }, 'req-refused-6'),
    ];
    await restore();

    for (const answer of answers) {
      expect({ status: answer.status, body: answer.json() }).toEqual({
        status: 500,
        body: errorBody(500, 'Ocurrió un error interno.'),
      });
    }
    expect({
      users: await t.database.query('SELECT * FROM users ORDER BY id'),
      sessions: await t.database.query('SELECT * FROM sessions ORDER BY id'),
      tokens: await t.database.query(
        'SELECT * FROM refresh_tokens ORDER BY "sessionId", generation',
      ),
    }).toEqual(before);
    expect(await rows()).toEqual(trailBefore);
    for (const secret of [DEFAULT_PASSWORD, WRONG_PASSWORD, refreshToken]) {
      expect(t.logger.allText()).not.toContain(secret);
    }

    // Once the database accepts rows again, the same requests succeed and are recorded.
    expect((await send(REFRESH, { refreshToken }, 'req-back')).status).toBe(200);
    expect((await rows()).map((row) => row.requestId)).toContain('req-back');
  });

  it('should store each user agent once, and keep none of a change that rolled back', async () => {
    const agents = async (): Promise<string[]> =>
      (await t.database.query<{ userAgent: string }>('SELECT "userAgent" FROM "user_agents"')).map(
        (agent) => agent.userAgent,
      );
    const restore = await refuseAuditInserts(t.database);
    const refused = await send(
      REGISTER,
      { username: 'carol', email: 'carol@example.com', password: DEFAULT_PASSWORD },
      'req-ua-0',
    );
    await restore();
    expect(refused.status).toBe(500);
    expect(await agents()).toEqual([]);

    const registered = await send(
      REGISTER,
      { username: 'carol', email: 'carol@example.com', password: DEFAULT_PASSWORD },
      'req-ua-1',
    );
    const { refreshToken } = registered.json<{ refreshToken: string }>();
    await send(REFRESH, { refreshToken }, 'req-ua-2');
    const other = await t.request(LOGIN, {
      method: 'POST',
      body: JSON.stringify({ email: 'carol@example.com', password: DEFAULT_PASSWORD }),
      headers: { 'content-type': 'application/json', 'user-agent': 'other-client/2.0' },
    });
    expect(other.status).toBe(200);

    expect((await agents()).sort()).toEqual([USER_AGENT, 'other-client/2.0'].sort());
    expect((await rows()).map((row) => [row.type, row.userAgent])).toEqual([
      ['registered', USER_AGENT],
      ['token_refreshed', USER_AGENT],
      ['login_succeeded', 'other-client/2.0'],
    ]);
  });
});

describe('audit trail on shutdown', () => {
  it('should record the requests still in flight when the process is told to stop', async () => {
    const database = await createTestDatabase();
    const directory = mkdtempSync(join(tmpdir(), 'keygate-audit-'));
    try {
      const server = await startServer({
        cwd: directory,
        env: {
          Jwt__SecretKey: TEST_SECRET_KEY,
          // Slow hashing keeps the logins in flight when the signal arrives.
          PasswordHashing__Iterations: '200000',
          ConnectionStrings__DefaultConnection: database.connectionString,
        },
      });
      const credentials = { email: 'drain@example.com', password: DEFAULT_PASSWORD };
      const post = (path: string, body: unknown, requestId: string) =>
        fetch(`${server.baseUrl}${path}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            connection: 'close',
            'x-request-id': requestId,
          },
          body: JSON.stringify(body),
        });
      expect((await post(REGISTER, { username: 'drain', ...credentials }, 'reg')).status).toBe(201);

      const inFlight = Array.from({ length: 6 }, (_, n) => post(LOGIN, credentials, `login-${n}`));
      await delay(100);
      server.child.kill('SIGTERM');

      const statuses = (await Promise.all(inFlight)).map((response) => response.status);
      expect(statuses).toEqual(Array(6).fill(200));
      expect(await waitForExit(server)).toEqual({ code: 0, signal: null });
      const recorded = await auditRows(database);
      expect(recorded.map((row) => row.requestId).sort()).toEqual(
        ['reg', ...Array.from({ length: 6 }, (_, n) => `login-${n}`)].sort(),
      );
    } finally {
      await stopAllServers();
      await database.drop();
      rmSync(directory, { recursive: true, force: true });
    }
  }, 30_000);
});
