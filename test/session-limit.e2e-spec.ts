import { IsNull } from 'typeorm';
import { Session } from '../src/tokens/entities/session.entity.js';
import { DEFAULT_PASSWORD, registerUser } from './factories/user.factory.js';
import { createTestApp, type TestApp } from './utils/create-test-app.js';
import { errorBody } from './utils/expected-bodies.js';
import {
  createTestDatabase,
  describeOnPostgres,
  type TestDatabase,
} from './utils/test-database.js';

const LIMIT = 3;

interface AuthBody {
  readonly accessToken: string;
  readonly refreshToken: string;
}

describe('sessions of one account (Sessions__MaxActivePerUser=3)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ environment: { Sessions__MaxActivePerUser: String(LIMIT) } });
  });

  afterAll(async () => {
    await t.close();
  });

  const login = async (email: string): Promise<AuthBody> => {
    const response = await t.post('/api/auth/login', { email, password: DEFAULT_PASSWORD });
    expect(response.status).toBe(200);
    return response.json<AuthBody>();
  };

  it('should end the least recently used session when a login goes past the limit', async () => {
    const user = await registerUser(t);
    const sessions: AuthBody[] = [user];
    for (let i = 0; i < LIMIT; i += 1) {
      t.clock.advance(60_000);
      sessions.push(await login(user.email));
    }
    const newest = sessions[sessions.length - 1];

    const listed = await t.get('/api/auth/sessions', newest.accessToken);

    expect(listed.status).toBe(200);
    expect(listed.json<{ sessions: unknown[] }>().sessions).toHaveLength(LIMIT);
    // The registration's session was the least recently used: it is over.
    const refresh = await t.post('/api/auth/refresh', { refreshToken: user.refreshToken });
    expect(refresh.status).toBe(401);
    expect(refresh.json()).toEqual(errorBody(401, 'Refresh token revocado.'));
    const ended = await t.dataSource
      .getRepository(Session)
      .findBy({ userId: user.id, endReason: 'Session limit reached' });
    expect(ended).toHaveLength(1);
    for (const kept of sessions.slice(1)) {
      t.clock.advance(1_000);
      const rotated = await t.post('/api/auth/refresh', { refreshToken: kept.refreshToken });
      expect(rotated.status).toBe(200);
    }
  });

  it('should keep a session that is used, and end the idle one instead', async () => {
    const user = await registerUser(t);
    t.clock.advance(1_000);
    const second = await login(user.email);
    t.clock.advance(1_000);
    const third = await login(user.email);
    // The registration's session is used again: now the second login is the least recent.
    t.clock.advance(60_000);
    const refreshed = await t.post('/api/auth/refresh', { refreshToken: user.refreshToken });
    expect(refreshed.status).toBe(200);

    t.clock.advance(60_000);
    await login(user.email);

    expect((await t.post('/api/auth/refresh', { refreshToken: second.refreshToken })).status).toBe(
      401,
    );
    expect((await t.post('/api/auth/refresh', { refreshToken: third.refreshToken })).status).toBe(
      200,
    );
  });

  it('should never leave more than the limit, however many logins run at once', async () => {
    const user = await registerUser(t);

    await Promise.all(Array.from({ length: 8 }, () => login(user.email)));

    await expect(
      t.dataSource.getRepository(Session).countBy({ userId: user.id, endedAt: IsNull() }),
    ).resolves.toBe(LIMIT);
  });
});

describeOnPostgres('sessions of one account across two instances (PostgreSQL)', () => {
  let database: TestDatabase;
  let apps: TestApp[];

  beforeAll(async () => {
    database = await createTestDatabase();
    const environment = { Sessions__MaxActivePerUser: String(LIMIT) };
    apps = [await createTestApp({ database, environment })];
    apps.push(await createTestApp({ database, environment }));
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await database.drop();
  });

  // Each instance's logins of one account take turns in its process (AccountLock), not across
  // processes: there the login's one statement meets the other's update of the account row and
  // is retried with a snapshot that holds its session (decision 0034).
  it('should never leave more than the limit when both start sessions at once', async () => {
    const user = await registerUser(apps[0]);

    const statuses = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const response = await apps[i % 2].post('/api/auth/login', {
          email: user.email,
          password: DEFAULT_PASSWORD,
        });
        return response.status;
      }),
    );

    expect(statuses).toEqual(Array.from({ length: 12 }, () => 200));
    await expect(
      apps[0].dataSource.getRepository(Session).countBy({ userId: user.id, endedAt: IsNull() }),
    ).resolves.toBe(LIMIT);
  });
});
