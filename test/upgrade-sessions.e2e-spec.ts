import { toSqliteDatetime } from '../src/database/sqlite-datetime.js';
import { AccessTokenService } from '../src/tokens/access-token.service.js';
import { hashRefreshToken } from '../src/tokens/storage/refresh-token-value.js';
import { createTestApp, type TestApp } from './utils/create-test-app.js';
import { errorBody } from './utils/expected-bodies.js';
import { FakeClock } from './utils/fake-clock.js';
import { REFRESH, SESSIONS } from './utils/routes.js';
import { migrateAsPreviousRelease } from './utils/previous-release.js';
import { createTestDatabase, onPostgres, type TestDatabase } from './utils/test-database.js';

// A database made by the previous release keeps every session working after the upgrade: its
// schema is made by that release's migrations (the list as it was when it shipped), its sessions
// are written in that release's layout with SQL (the entities may have moved on since), and the
// current service, which runs the newer migrations at start-up, is asked what a client would ask.
// Any migration that reshapes the token or session tables must keep this suite green.

const MINUTE_MS = 60 * 1000;
const DAY_MS = 24 * 60 * MINUTE_MS;
const NOW = new Date('2026-03-01T12:00:00.000Z');
const ago = (ms: number): Date => new Date(NOW.getTime() - ms);

const USER = {
  id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
  username: 'alice',
  email: 'alice@example.com',
};
const LAPTOP = { ip: '203.0.113.7', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0' };
const PHONE = { ip: '198.51.100.20', userAgent: null };

/** One stored token of the previous release's layout, with its raw value. */
interface OldToken {
  readonly raw: string;
  readonly id: string;
  readonly familyId: string;
  readonly generation: number;
  readonly createdAt: Date;
  readonly sessionStartedAt: Date;
  readonly client: { readonly ip: string; readonly userAgent: string | null };
  readonly expiresAt: Date;
  readonly revoked: { readonly reason: string; readonly replacedBy: string | null } | null;
}

const uuid = (family: number, generation: number): string =>
  `${family}${family}${family}${family}${family}${family}${family}${family}-0000-4000-8000-${String(generation).padStart(12, '0')}`;

function chain(
  family: number,
  length: number,
  startedAt: Date,
  client: OldToken['client'],
  end: { readonly reason: string } | null,
): OldToken[] {
  return Array.from({ length }, (_unused, generation) => {
    const createdAt = new Date(startedAt.getTime() + generation * 60 * MINUTE_MS);
    const newest = generation === length - 1;
    return {
      raw: `raw-token-of-session-${family}-generation-${generation}`,
      id: uuid(family, generation),
      familyId: uuid(family, 0),
      generation,
      createdAt,
      sessionStartedAt: startedAt,
      client,
      expiresAt: new Date(createdAt.getTime() + 7 * DAY_MS),
      revoked: newest
        ? end === null
          ? null
          : { reason: end.reason, replacedBy: null }
        : { reason: 'Replaced by new token', replacedBy: uuid(family, generation + 1) },
    };
  });
}

/** Session 1 rotated twice and active; 2 active, never rotated; 3 logged out; 4 expired. */
const ROTATED = chain(1, 3, ago(2 * DAY_MS), LAPTOP, null);
const FRESH = chain(2, 1, ago(DAY_MS), PHONE, null);
const LOGGED_OUT = chain(3, 2, ago(3 * DAY_MS), LAPTOP, { reason: 'logout' });
const EXPIRED = chain(4, 2, ago(20 * DAY_MS), PHONE, null);
const OLD_TOKENS = [...ROTATED, ...FRESH, ...LOGGED_OUT, ...EXPIRED];

describe('upgrade from the previous release: sessions and refresh tokens', () => {
  let database: TestDatabase;
  let t: TestApp;

  const timestamp = (date: Date | null): string | null =>
    date === null ? null : onPostgres ? date.toISOString() : toSqliteDatetime(date);
  const flag = (value: boolean): boolean | number => (onPostgres ? value : value ? 1 : 0);

  beforeEach(async () => {
    database = await createTestDatabase();
    await migrateAsPreviousRelease(database.connectionString);
    {
      await database.query(
        'INSERT INTO users (id, username, email, "passwordHash", "createdAt", "emailVerifiedAt") ' +
          'VALUES ($1, $2, $3, $4, $5, $6)',
        [
          USER.id,
          USER.username,
          USER.email,
          'x',
          timestamp(ago(30 * DAY_MS)),
          timestamp(ago(30 * DAY_MS)),
        ],
      );
      for (const token of OLD_TOKENS) {
        await database.query(
          `INSERT INTO refresh_tokens (id, "tokenHash", "userId", "familyId", generation,
             "expiresAt", "createdAt", "createdByIp", "createdByUserAgent", "sessionStartedAt",
             "isRevoked", "revokedAt", "revokedByIp", "reasonRevoked", "replacedByTokenId",
             "authMethods")
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
          [
            token.id,
            // The previous release stored the digest as hex text.
            hashRefreshToken(token.raw).toString('hex'),
            USER.id,
            token.familyId,
            token.generation,
            timestamp(token.expiresAt),
            timestamp(token.createdAt),
            token.client.ip,
            token.client.userAgent,
            timestamp(token.sessionStartedAt),
            flag(token.revoked !== null),
            timestamp(token.revoked === null ? null : new Date(token.createdAt.getTime() + 1)),
            token.revoked === null ? null : token.client.ip,
            token.revoked?.reason ?? null,
            token.revoked?.replacedBy ?? null,
            'pwd',
          ],
        );
      }
    }
    // The current service migrates the database at start-up.
    t = await createTestApp({ database, clock: new FakeClock(NOW) });
  });

  afterEach(async () => {
    await t.close();
    await database.drop();
  });

  /** An access token of the account, as a client holding one would present it. */
  const bearer = (): string =>
    t.app
      .get(AccessTokenService)
      .sign({ ...USER, emailVerifiedAt: ago(30 * DAY_MS) }, ROTATED[0].familyId).token;

  const listed = async (): Promise<unknown> => {
    const response = await t.get(SESSIONS, bearer());
    expect(response.status).toBe(200);
    return response.json();
  };

  const sessionOf = (newest: OldToken): Record<string, unknown> => ({
    id: newest.familyId,
    createdAt: newest.sessionStartedAt.toISOString(),
    lastUsedAt: newest.createdAt.toISOString(),
    ip: newest.client.ip,
    userAgent: newest.client.userAgent,
    current: false,
  });

  it('should list the active sessions as the previous release did', async () => {
    await expect(listed()).resolves.toEqual({
      sessions: [sessionOf(FRESH[0]), sessionOf(ROTATED[2])],
    });
  });

  it('should refresh with the newest token of an old session, which stays the same session', async () => {
    const response = await t.post(REFRESH, { refreshToken: ROTATED[2].raw });

    expect(response.status).toBe(200);
    const { refreshToken } = response.json<{ refreshToken: string }>();
    const again = await t.request(REFRESH, {
      method: 'POST',
      body: JSON.stringify({ refreshToken }),
      headers: { 'content-type': 'application/json', 'user-agent': 'KeygateApp/3.1' },
    });
    expect(again.status).toBe(200);
    await expect(listed()).resolves.toEqual({
      sessions: [
        {
          ...sessionOf(ROTATED[2]),
          lastUsedAt: NOW.toISOString(),
          ip: '127.0.0.1',
          userAgent: 'KeygateApp/3.1',
        },
        sessionOf(FRESH[0]),
      ],
    });
  });

  it('should detect the reuse of a token rotated before the upgrade and end its session', async () => {
    const reuse = await t.post(REFRESH, { refreshToken: ROTATED[0].raw });

    expect(reuse.status).toBe(401);
    expect(reuse.json()).toEqual(errorBody(401, 'Refresh token revocado.'));
    const newest = await t.post(REFRESH, { refreshToken: ROTATED[2].raw });
    expect(newest.status).toBe(401);
    expect(newest.json()).toEqual(errorBody(401, 'Refresh token revocado.'));
    await expect(listed()).resolves.toEqual({ sessions: [sessionOf(FRESH[0])] });
  });

  it('should refuse the tokens of sessions that had ended before the upgrade', async () => {
    const cases = [
      { token: LOGGED_OUT[1], message: 'Refresh token revocado.' },
      { token: LOGGED_OUT[0], message: 'Refresh token revocado.' },
      { token: EXPIRED[1], message: 'Refresh token expirado.' },
      { token: { raw: 'never-issued' }, message: 'Refresh token inválido.' },
    ];
    for (const { token, message } of cases) {
      const response = await t.post(REFRESH, { refreshToken: token.raw });

      expect({ raw: token.raw, status: response.status, body: response.json() }).toEqual({
        raw: token.raw,
        status: 401,
        body: errorBody(401, message),
      });
    }
    await expect(listed()).resolves.toEqual({
      sessions: [sessionOf(FRESH[0]), sessionOf(ROTATED[2])],
    });
  });
});
