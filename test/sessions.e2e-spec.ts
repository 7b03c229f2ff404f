import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { AuthEventRecord } from '../src/events/auth-event.js';
import { AuthEvents } from '../src/events/auth-events.js';
import { AccessTokenService } from '../src/tokens/access-token.service.js';
import { Session } from '../src/tokens/entities/session.entity.js';
import { findRefreshToken } from './factories/refresh-token.factory.js';
import { createUser, DEFAULT_PASSWORD } from './factories/user.factory.js';
import { type TestApp, type TestResponse, useTestApp } from './utils/create-test-app.js';
import { errorBody, problemDetails, UNAUTHORIZED_BODY } from './utils/expected-bodies.js';
import {
  LOGIN,
  ME,
  REFRESH,
  REGISTER,
  REVOKE,
  REVOKE_ALL_SESSIONS,
  SESSIONS,
} from './utils/routes.js';

const MINUTE_MS = 60 * 1000;
const DAY_MS = 24 * 60 * MINUTE_MS;

/** Where a request comes from: the test app trusts 127.0.0.1 as a proxy, so X-Forwarded-For counts. */
interface Client {
  readonly ip: string;
  readonly userAgent: string;
}

const LAPTOP: Client = {
  ip: '203.0.113.7',
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0',
};
const PHONE: Client = { ip: '198.51.100.20', userAgent: 'KeygateApp/3.1 (Android 15; Pixel 9)' };
const TABLET: Client = { ip: '192.0.2.44', userAgent: 'Mozilla/5.0 (iPad; CPU OS 18_0) Safari' };

interface AuthBody {
  readonly accessToken: string;
  readonly refreshToken: string;
}

interface SessionBody {
  readonly id: string;
  readonly createdAt: string;
  readonly lastUsedAt: string;
  readonly ip: string;
  readonly userAgent: string | null;
  readonly current: boolean;
}

interface Account {
  readonly id: string;
  readonly email: string;
  readonly password: string;
}

function headersFrom(client: Client): Record<string, string> {
  return { 'user-agent': client.userAgent, 'x-forwarded-for': client.ip };
}

function postFrom(t: TestApp, path: string, body: unknown, client: Client): Promise<TestResponse> {
  return t.request(path, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headersFrom(client) },
  });
}

async function login(t: TestApp, account: Account, client: Client): Promise<AuthBody> {
  const response = await postFrom(
    t,
    LOGIN,
    { email: account.email, password: account.password },
    client,
  );
  expect(response.status).toBe(200);
  return response.json<AuthBody>();
}

async function refreshFrom(t: TestApp, refreshToken: string, client: Client): Promise<AuthBody> {
  const response = await postFrom(t, REFRESH, { refreshToken }, client);
  expect(response.status).toBe(200);
  return response.json<AuthBody>();
}

function refresh(t: TestApp, refreshToken: string): Promise<TestResponse> {
  return t.post(REFRESH, { refreshToken });
}

function listSessions(
  t: TestApp,
  accessToken: string | undefined,
  namedRefreshToken?: string,
): Promise<TestResponse> {
  return t.request(SESSIONS, {
    headers: {
      ...(accessToken === undefined ? {} : { authorization: `Bearer ${accessToken}` }),
      ...(namedRefreshToken === undefined ? {} : { 'x-refresh-token': namedRefreshToken }),
    },
  });
}

/** The listed sessions, after asserting the answer is a 200 with exactly `{ sessions }`. */
async function sessionsOf(
  t: TestApp,
  accessToken: string,
  namedRefreshToken?: string,
): Promise<SessionBody[]> {
  const response = await listSessions(t, accessToken, namedRefreshToken);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const body = response.json<{ sessions: SessionBody[] }>();
  expect(Object.keys(body)).toEqual(['sessions']);
  return body.sessions;
}

function revokeAll(
  t: TestApp,
  accessToken: string | undefined,
  body: unknown,
): Promise<TestResponse> {
  return t.post(REVOKE_ALL_SESSIONS, body, accessToken);
}

function revokeAllFrom(
  t: TestApp,
  accessToken: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<TestResponse> {
  return t.request(REVOKE_ALL_SESSIONS, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${accessToken}`,
      ...headers,
    },
  });
}

/** The session id of a raw refresh token: its family id as stored. */
async function sessionIdOf(t: TestApp, refreshToken: string): Promise<string> {
  const token = await findRefreshToken(t, refreshToken);
  if (token === null) {
    throw new Error('expected a stored refresh token for this raw value');
  }
  return token.familyId;
}

async function newAccount(t: TestApp): Promise<Account> {
  const user = await createUser(t);
  return { id: user.id, email: user.email, password: DEFAULT_PASSWORD };
}

/**
 * An access token valid at the clock's current time, signed by the app, that starts no session
 * (it names one that does not exist): access tokens live 15 minutes, and these tests move the
 * clock by days.
 */
function bearerOf(t: TestApp, account: Account): string {
  const signed = t.app
    .get(AccessTokenService)
    .sign({ ...account, emailVerifiedAt: null }, randomUUID());
  return signed.token;
}

/** A stored token of `familyId`, active until a week after `createdAt`. */
/** A session row as a login and its last refresh leave it. */
function storedSession(
  userId: string,
  id: string,
  startedAt: Date,
  lastUsedAt: Date,
  client: { readonly ip: string; readonly userAgent: string | null },
): Session {
  return Object.assign(new Session(), {
    id,
    userId,
    startedAt,
    authMethods: 'pwd',
    generation: 1,
    lastUsedAt,
    lastIp: client.ip,
    lastUserAgent: client.userAgent,
    expiresAt: new Date(lastUsedAt.getTime() + 7 * DAY_MS),
    oldestTokenAt: startedAt,
    endedAt: null,
    endedByIp: null,
    endReason: null,
  });
}

async function tokenRows(t: TestApp): Promise<unknown[]> {
  return [
    await t.dataSource.query<Record<string, unknown>[]>('SELECT * FROM sessions ORDER BY id'),
    await t.dataSource.query<Record<string, unknown>[]>(
      'SELECT * FROM refresh_tokens ORDER BY "sessionId", generation',
    ),
  ];
}

describe('Sessions', () => {
  const t = useTestApp({ environment: { TrustedProxies: '127.0.0.1' } });

  describe('GET /api/auth/sessions', () => {
    it('should list one session per login with its start, last use, IP and user agent, most recent first', async () => {
      const account = await newAccount(t);
      const laptopAt = t.clock.now();
      const laptop = await login(t, account, LAPTOP);
      t.clock.advance(MINUTE_MS);
      const phoneAt = t.clock.now();
      const phone = await login(t, account, PHONE);

      const sessions = await sessionsOf(t, phone.accessToken);

      expect(sessions).toEqual([
        {
          id: await sessionIdOf(t, phone.refreshToken),
          createdAt: phoneAt.toISOString(),
          lastUsedAt: phoneAt.toISOString(),
          ip: PHONE.ip,
          userAgent: PHONE.userAgent,
          current: false,
        },
        {
          id: await sessionIdOf(t, laptop.refreshToken),
          createdAt: laptopAt.toISOString(),
          lastUsedAt: laptopAt.toISOString(),
          ip: LAPTOP.ip,
          userAgent: LAPTOP.userAgent,
          current: false,
        },
      ]);
    });

    it('should start a session on registration', async () => {
      const registeredAt = t.clock.now();
      const response = await postFrom(
        t,
        REGISTER,
        { username: 'alice', email: 'alice-sessions@example.com', password: DEFAULT_PASSWORD },
        TABLET,
      );
      expect(response.status).toBe(201);
      const body = response.json<AuthBody>();

      expect(await sessionsOf(t, body.accessToken)).toEqual([
        {
          id: await sessionIdOf(t, body.refreshToken),
          createdAt: registeredAt.toISOString(),
          lastUsedAt: registeredAt.toISOString(),
          ip: TABLET.ip,
          userAgent: TABLET.userAgent,
          current: false,
        },
      ]);
    });

    it('should move last use, IP and user agent to the latest refresh, keeping the id and the start', async () => {
      const account = await newAccount(t);
      const startedAt = t.clock.now();
      const laptop = await login(t, account, LAPTOP);
      t.clock.advance(MINUTE_MS);
      const phone = await login(t, account, PHONE);
      const laptopId = await sessionIdOf(t, laptop.refreshToken);
      t.clock.advance(60 * MINUTE_MS);
      const refreshedAt = t.clock.now();
      const travelling: Client = { ip: '192.0.2.200', userAgent: 'Mozilla/5.0 Firefox/141.0' };

      const rotated = await refreshFrom(t, laptop.refreshToken, travelling);

      expect(await sessionIdOf(t, rotated.refreshToken)).toBe(laptopId);
      const sessions = await sessionsOf(t, bearerOf(t, account));
      expect(sessions.map((session) => session.id)).toEqual([
        laptopId,
        await sessionIdOf(t, phone.refreshToken),
      ]);
      expect(sessions[0]).toEqual({
        id: laptopId,
        createdAt: startedAt.toISOString(),
        lastUsedAt: refreshedAt.toISOString(),
        ip: travelling.ip,
        userAgent: travelling.userAgent,
        current: false,
      });
    });

    it('should list a thousand sessions, each as its newest token says, most recently used first', async () => {
      const account = await newAccount(t);
      const now = t.clock.now().getTime();
      const stored: Session[] = [];
      const listed: SessionBody[] = [];
      for (let i = 0; i < 1_000; i += 1) {
        const familyId = randomUUID();
        const startedAt = new Date(now - DAY_MS + (i % 7) * MINUTE_MS);
        // Three sessions share each instant of last use: the newer start, then the id, first.
        const lastUsedAt = new Date(now - Math.floor(i / 3) * MINUTE_MS);
        const client = i % 2 === 0 ? LAPTOP : { ip: `192.0.2.${i % 250}`, userAgent: null };
        stored.push(storedSession(account.id, familyId, startedAt, lastUsedAt, client));
        listed.push({
          id: familyId,
          createdAt: startedAt.toISOString(),
          lastUsedAt: lastUsedAt.toISOString(),
          ip: client.ip,
          userAgent: client.userAgent,
          current: false,
        });
      }
      // Not listed: a session logged out and one whose token expired.
      const loggedOut = storedSession(
        account.id,
        randomUUID(),
        new Date(now),
        new Date(now),
        LAPTOP,
      );
      loggedOut.endedAt = new Date(now);
      const expired = storedSession(account.id, randomUUID(), new Date(now), new Date(now), LAPTOP);
      expired.expiresAt = new Date(now);
      stored.push(loggedOut, expired);
      for (let i = 0; i < stored.length; i += 200) {
        await t.dataSource.getRepository(Session).insert(stored.slice(i, i + 200));
      }
      listed.sort(
        (a, b) =>
          b.lastUsedAt.localeCompare(a.lastUsedAt) ||
          b.createdAt.localeCompare(a.createdAt) ||
          (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
      );

      expect(await sessionsOf(t, bearerOf(t, account))).toEqual(listed);
    });

    it('should keep the start of a session that refreshes past the lifetime of its first token', async () => {
      const account = await newAccount(t);
      const startedAt = t.clock.now();
      let tokens = await login(t, account, LAPTOP);
      for (let day = 0; day < 3; day += 1) {
        t.clock.advance(5 * DAY_MS);
        tokens = await refreshFrom(t, tokens.refreshToken, LAPTOP);
      }

      const [session] = await sessionsOf(t, tokens.accessToken);

      expect(session).toMatchObject({
        createdAt: startedAt.toISOString(),
        lastUsedAt: t.clock.now().toISOString(),
      });
    });

    it('should record a null user agent when the client sent none', async () => {
      const account = await newAccount(t);
      const response = await postFrom(t, LOGIN, account, { ip: PHONE.ip, userAgent: '' });
      expect(response.status).toBe(200);

      const [session] = await sessionsOf(t, response.json<AuthBody>().accessToken);

      expect(session).toMatchObject({ ip: PHONE.ip, userAgent: null });
    });

    it('should cut a long user agent as the request origin does, to 256 characters', async () => {
      const account = await newAccount(t);
      const long = `Agent/${'x'.repeat(400)}`;

      const tokens = await login(t, account, { ip: PHONE.ip, userAgent: long });

      const [session] = await sessionsOf(t, tokens.accessToken);
      expect(session.userAgent).toBe(long.slice(0, 256));
    });

    it('should mark as current the session whose refresh token X-Refresh-Token names', async () => {
      const account = await newAccount(t);
      const laptop = await login(t, account, LAPTOP);
      t.clock.advance(MINUTE_MS);
      const phone = await login(t, account, PHONE);
      const laptopId = await sessionIdOf(t, laptop.refreshToken);

      const sessions = await sessionsOf(t, phone.accessToken, laptop.refreshToken);

      expect(sessions.map(({ id, current }) => ({ id, current }))).toEqual([
        { id: await sessionIdOf(t, phone.refreshToken), current: false },
        { id: laptopId, current: true },
      ]);
    });

    it('should follow the current session through rotation: the new token marks it, the replaced one does not', async () => {
      const account = await newAccount(t);
      const laptop = await login(t, account, LAPTOP);
      t.clock.advance(MINUTE_MS);
      const rotated = await refreshFrom(t, laptop.refreshToken, LAPTOP);

      const withNew = await sessionsOf(t, rotated.accessToken, rotated.refreshToken);
      const withReplaced = await sessionsOf(t, rotated.accessToken, laptop.refreshToken);

      expect(withNew.map((session) => session.current)).toEqual([true]);
      expect(withReplaced.map((session) => session.current)).toEqual([false]);
      // Naming a replaced token is not a refresh: it triggers no reuse detection.
      await refreshFrom(t, rotated.refreshToken, LAPTOP);
    });

    it("should mark nothing, and answer the same list, for a token that is not one of the bearer's active tokens", async () => {
      const account = await newAccount(t);
      const laptop = await login(t, account, LAPTOP);
      const loggedOut = await login(t, account, TABLET);
      expect(
        (await t.post(REVOKE, { refreshToken: loggedOut.refreshToken }, laptop.accessToken)).status,
      ).toBe(200);
      const stranger = await login(t, await newAccount(t), PHONE);
      const unnamed = await listSessions(t, laptop.accessToken);
      expect(unnamed.status).toBe(200);

      const cases: ReadonlyArray<readonly [string, string]> = [
        ['an unknown token', 'not-a-refresh-token'],
        ["another user's active token", stranger.refreshToken],
        ["the bearer's logged-out token", loggedOut.refreshToken],
        ['a token of 1,000 characters', 'x'.repeat(1000)],
      ];
      for (const [, named] of cases) {
        const response = await listSessions(t, laptop.accessToken, named);

        expect(response.status).toBe(200);
        expect(response.json()).toEqual(unnamed.json());
      }
      expect(unnamed.json<{ sessions: SessionBody[] }>().sessions).toEqual([
        expect.objectContaining({ current: false, ip: LAPTOP.ip }),
      ]);
    });

    it('should not list a session ended by logout or by reuse detection', async () => {
      const account = await newAccount(t);
      const laptop = await login(t, account, LAPTOP);
      const phone = await login(t, account, PHONE);
      const tablet = await login(t, account, TABLET);
      await t.post(REVOKE, { refreshToken: phone.refreshToken }, laptop.accessToken);
      await refreshFrom(t, tablet.refreshToken, TABLET);
      // The tablet's first token is presented again: its session ends.
      expect((await refresh(t, tablet.refreshToken)).status).toBe(401);

      const sessions = await sessionsOf(t, laptop.accessToken);

      expect(sessions.map((session) => session.id)).toEqual([
        await sessionIdOf(t, laptop.refreshToken),
      ]);
    });

    it('should not list a session whose newest token has expired', async () => {
      const account = await newAccount(t);
      const laptop = await login(t, account, LAPTOP);
      t.clock.advance(2 * DAY_MS);
      const phone = await login(t, account, PHONE);
      // The laptop's token expires at exactly seven days.
      t.clock.advance(5 * DAY_MS);

      expect((await sessionsOf(t, bearerOf(t, account))).map((session) => session.id)).toEqual([
        await sessionIdOf(t, phone.refreshToken),
      ]);
      expect((await refresh(t, laptop.refreshToken)).json()).toEqual(
        errorBody(401, 'Refresh token expirado.'),
      );
      t.clock.advance(2 * DAY_MS);
      expect(await sessionsOf(t, bearerOf(t, account))).toEqual([]);
    });

    it('should answer any X-Refresh-Token value with the list, marking nothing, never a 500', async () => {
      const account = await newAccount(t);
      const tokens = await login(t, account, LAPTOP);

      await fc.assert(
        fc.asyncProperty(
          fc
            .string({ unit: 'binary', maxLength: 600 })
            .filter((value) => /^[\x21-\x7e\x80-\xff][\x20-\x7e\x80-\xff]*$/.test(value))
            .filter((value) => !value.endsWith(' ')),
          async (named) => {
            const response = await listSessions(t, tokens.accessToken, named);

            expect(response.status).toBe(200);
            expect(response.json<{ sessions: SessionBody[] }>().sessions).toEqual([
              expect.objectContaining({ current: false }),
            ]);
          },
        ),
        { numRuns: 100 },
      );
    }, 30_000);

    it("should never list another user's sessions", async () => {
      const alice = await login(t, await newAccount(t), LAPTOP);
      const bob = await login(t, await newAccount(t), PHONE);

      const aliceSessions = await sessionsOf(t, alice.accessToken, bob.refreshToken);
      const bobSessions = await sessionsOf(t, bob.accessToken, alice.refreshToken);

      expect(aliceSessions).toEqual([
        expect.objectContaining({ id: await sessionIdOf(t, alice.refreshToken), current: false }),
      ]);
      expect(bobSessions).toEqual([
        expect.objectContaining({ id: await sessionIdOf(t, bob.refreshToken), current: false }),
      ]);
    });

    it('should answer the bare 401 without a valid bearer token, even with X-Refresh-Token', async () => {
      const tokens = await login(t, await newAccount(t), LAPTOP);

      for (const bearer of [undefined, 'not-a-jwt', tokens.refreshToken]) {
        const response = await listSessions(t, bearer, tokens.refreshToken);

        expect(response.status).toBe(401);
        expect(response.json()).toEqual(UNAUTHORIZED_BODY);
      }
    });
  });

  describe('POST /api/auth/sessions/revoke-all', () => {
    it('should revoke every active session, answer how many, and leave no refresh token usable', async () => {
      const account = await newAccount(t);
      const laptop = await login(t, account, LAPTOP);
      const phone = await login(t, account, PHONE);
      const tablet = await login(t, account, TABLET);
      t.clock.advance(MINUTE_MS);
      const revokedAt = t.clock.now();

      const response = await revokeAllFrom(t, laptop.accessToken, {}, headersFrom(LAPTOP));

      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.json()).toEqual({
        message: 'Sesiones revocadas exitosamente.',
        revokedSessions: 3,
      });
      for (const tokens of [laptop, phone, tablet]) {
        expect((await refresh(t, tokens.refreshToken)).json()).toEqual(
          errorBody(401, 'Refresh token revocado.'),
        );
        expect(await findRefreshToken(t, tokens.refreshToken)).toMatchObject({
          isRevoked: true,
          revokedAt,
          revokedByIp: LAPTOP.ip,
        });
      }
      expect(await sessionsOf(t, laptop.accessToken)).toEqual([]);
    });

    it('should keep the current session with keepCurrent, which still refreshes', async () => {
      const account = await newAccount(t);
      const laptop = await login(t, account, LAPTOP);
      const phone = await login(t, account, PHONE);
      const tablet = await login(t, account, TABLET);

      const response = await revokeAll(t, phone.accessToken, {
        keepCurrent: true,
        refreshToken: phone.refreshToken,
      });

      expect(response.status).toBe(200);
      expect(response.json()).toEqual({
        message: 'Sesiones revocadas exitosamente.',
        revokedSessions: 2,
      });
      for (const tokens of [laptop, tablet]) {
        expect((await refresh(t, tokens.refreshToken)).json()).toEqual(
          errorBody(401, 'Refresh token revocado.'),
        );
      }
      const kept = await refreshFrom(t, phone.refreshToken, PHONE);
      expect(await sessionsOf(t, kept.accessToken, kept.refreshToken)).toEqual([
        expect.objectContaining({ id: await sessionIdOf(t, phone.refreshToken), current: true }),
      ]);
    });

    it('should answer 0 when the only session is the kept one, and again when nothing is left', async () => {
      const tokens = await login(t, await newAccount(t), LAPTOP);

      const keeping = await revokeAll(t, tokens.accessToken, {
        keepCurrent: true,
        refreshToken: tokens.refreshToken,
      });
      const all = await revokeAll(t, tokens.accessToken, {});
      const again = await revokeAll(t, tokens.accessToken, {});

      expect([keeping, all, again].map((response) => response.json())).toEqual(
        [0, 1, 0].map((revokedSessions) => ({
          message: 'Sesiones revocadas exitosamente.',
          revokedSessions,
        })),
      );
    });

    it('should revoke the named session too when keepCurrent is false or absent', async () => {
      const account = await newAccount(t);
      const laptop = await login(t, account, LAPTOP);
      const phone = await login(t, account, PHONE);

      const response = await revokeAll(t, laptop.accessToken, {
        keepCurrent: false,
        refreshToken: laptop.refreshToken,
      });

      expect(response.json()).toEqual({
        message: 'Sesiones revocadas exitosamente.',
        revokedSessions: 2,
      });
      for (const tokens of [laptop, phone]) {
        expect((await refresh(t, tokens.refreshToken)).status).toBe(401);
      }
    });

    it('should neither touch nor count a session that has already expired', async () => {
      const account = await newAccount(t);
      const expired = await login(t, account, LAPTOP);
      t.clock.advance(DAY_MS);
      await login(t, account, PHONE);
      t.clock.advance(6 * DAY_MS);
      const before = await findRefreshToken(t, expired.refreshToken);

      const response = await revokeAll(t, bearerOf(t, account), {});

      expect(response.json()).toEqual({
        message: 'Sesiones revocadas exitosamente.',
        revokedSessions: 1,
      });
      expect(await findRefreshToken(t, expired.refreshToken)).toEqual(before);
      expect((await refresh(t, expired.refreshToken)).json()).toEqual(
        errorBody(401, 'Refresh token expirado.'),
      );
    });

    it("should leave other users' sessions alone", async () => {
      const alice = await login(t, await newAccount(t), LAPTOP);
      const bob = await login(t, await newAccount(t), PHONE);

      const response = await revokeAll(t, alice.accessToken, {});

      expect(response.json()).toMatchObject({ revokedSessions: 1 });
      expect((await sessionsOf(t, bob.accessToken)).length).toBe(1);
      await refreshFrom(t, bob.refreshToken, PHONE);
    });

    it('should leave access tokens valid until they expire: they are not sessions', async () => {
      const tokens = await login(t, await newAccount(t), LAPTOP);

      await revokeAll(t, tokens.accessToken, {});

      expect((await t.get(ME, tokens.accessToken)).status).toBe(200);
    });

    it('should refuse keepCurrent without an active token of the bearer with 401 Refresh token inválido., revoking nothing', async () => {
      const account = await newAccount(t);
      const laptop = await login(t, account, LAPTOP);
      const loggedOut = await login(t, account, TABLET);
      await t.post(REVOKE, { refreshToken: loggedOut.refreshToken }, laptop.accessToken);
      const rotated = await login(t, account, PHONE);
      await refreshFrom(t, rotated.refreshToken, PHONE);
      const stranger = await login(t, await newAccount(t), PHONE);
      const before = await tokenRows(t);

      const cases: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
        ['no refresh token', { keepCurrent: true }],
        ['a null refresh token', { keepCurrent: true, refreshToken: null }],
        ['an unknown token', { keepCurrent: true, refreshToken: 'not-a-refresh-token' }],
        ["another user's active token", { keepCurrent: true, refreshToken: stranger.refreshToken }],
        [
          "the bearer's logged-out token",
          { keepCurrent: true, refreshToken: loggedOut.refreshToken },
        ],
        ["the bearer's replaced token", { keepCurrent: true, refreshToken: rotated.refreshToken }],
      ];
      for (const [, body] of cases) {
        const response = await revokeAll(t, laptop.accessToken, body);

        expect(response.status).toBe(401);
        expect(response.headers.get('content-type')).toMatch(/^application\/json/);
        expect(response.json()).toEqual(errorBody(401, 'Refresh token inválido.'));
      }
      expect(await tokenRows(t)).toEqual(before);
    });

    it('should refuse keepCurrent with an expired token of the bearer, revoking nothing', async () => {
      const account = await newAccount(t);
      const expired = await login(t, account, LAPTOP);
      t.clock.advance(DAY_MS);
      const active = await login(t, account, PHONE);
      t.clock.advance(6 * DAY_MS);

      const response = await revokeAll(t, bearerOf(t, account), {
        keepCurrent: true,
        refreshToken: expired.refreshToken,
      });

      expect(response.status).toBe(401);
      expect(response.json()).toEqual(errorBody(401, 'Refresh token inválido.'));
      await refreshFrom(t, active.refreshToken, PHONE);
    });

    it('should answer 400 problem details for an invalid body, revoking nothing', async () => {
      const tokens = await login(t, await newAccount(t), LAPTOP);
      const before = await tokenRows(t);

      const cases: ReadonlyArray<readonly [unknown, readonly string[]]> = [
        [{ keepCurrent: 'true' }, ['keepCurrent']],
        [{ keepCurrent: 1 }, ['keepCurrent']],
        [{ keepCurrent: true, refreshToken: 42 }, ['refreshToken']],
        [{ keepCurrent: true, refreshToken: '' }, ['refreshToken']],
        [{ keepCurrent: true, refreshToken: 'x'.repeat(513) }, ['refreshToken']],
        [{ keepCurrent: 'yes', refreshToken: ['a'] }, ['keepCurrent', 'refreshToken']],
        ['[]', ['$']],
        ['"keepCurrent"', ['$']],
        ['{"keepCurrent": tru', ['$']],
        ['', ['$']],
      ];
      for (const [body, fields] of cases) {
        const response = await revokeAll(t, tokens.accessToken, body);

        expect(response.status).toBe(400);
        expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        const problem = response.json<{ errors: Record<string, unknown> }>();
        expect(problem).toEqual(problemDetails(fields));
        expect(Object.keys(problem.errors).sort()).toEqual([...fields].sort());
      }
      expect(await tokenRows(t)).toEqual(before);
    });

    it('should answer the bare 401 without a valid bearer token, revoking nothing', async () => {
      const tokens = await login(t, await newAccount(t), LAPTOP);

      for (const bearer of [undefined, 'not-a-jwt', tokens.refreshToken]) {
        const response = await revokeAll(t, bearer, {});

        expect(response.status).toBe(401);
        expect(response.json()).toEqual(UNAUTHORIZED_BODY);
      }
      await refreshFrom(t, tokens.refreshToken, LAPTOP);
    });

    it('should tell a sessions_revoked event with the kept session, the revoked tokens and the origin, and none when it refuses', async () => {
      const account = await newAccount(t);
      const laptop = await login(t, account, LAPTOP);
      const phone = await login(t, account, PHONE);
      const records: AuthEventRecord[] = [];
      t.app.get(AuthEvents).subscribe((record) => records.push(record));
      const userId = account.id;

      await revokeAll(t, laptop.accessToken, { keepCurrent: true, refreshToken: 'unknown' });
      const keeping = await revokeAllFrom(
        t,
        laptop.accessToken,
        { keepCurrent: true, refreshToken: laptop.refreshToken },
        { 'x-request-id': 'revoke-all-1', ...headersFrom(LAPTOP) },
      );
      const all = await revokeAll(t, laptop.accessToken, {});

      expect([keeping.status, all.status]).toEqual([200, 200]);
      const revoked = records.filter((record) => record.event.type === 'sessions_revoked');
      expect(revoked).toEqual([
        {
          event: {
            type: 'sessions_revoked',
            userId,
            keepFamilyId: await sessionIdOf(t, laptop.refreshToken),
            endedSessionIds: [(await findRefreshToken(t, phone.refreshToken))?.familyId],
          },
          origin: { ip: LAPTOP.ip, userAgent: LAPTOP.userAgent, requestId: 'revoke-all-1' },
          at: t.clock.now(),
        },
        {
          event: {
            type: 'sessions_revoked',
            userId,
            keepFamilyId: null,
            endedSessionIds: [(await findRefreshToken(t, laptop.refreshToken))?.familyId],
          },
          origin: expect.objectContaining({ ip: '127.0.0.1' }),
          at: t.clock.now(),
        },
      ]);
      expect(records.map((record) => record.event.type)).toEqual([
        'sessions_revoked',
        'sessions_revoked',
      ]);
    });

    it('should log the revocation with the user id and never a token', async () => {
      const account = await newAccount(t);
      const tokens = await login(t, account, LAPTOP);

      await revokeAll(t, tokens.accessToken, {
        keepCurrent: false,
        refreshToken: tokens.refreshToken,
      });

      expect(t.logger.at('log').map((entry) => entry.text)).toContain(
        `1 session(s) revoked for user ${account.id}`,
      );
      expect(t.logger.allText()).not.toContain(tokens.refreshToken);
      expect(t.logger.allText()).not.toContain(tokens.accessToken);
    });
  });
});
