import { setTimeout as delay } from 'node:timers/promises';
import { DEFAULT_PASSWORD, registerUser } from './factories/user.factory.js';
import { createTestApp, type TestApp } from './utils/create-test-app.js';
import { startRoundTripCounter, type RoundTripCounter } from '../bench/lib/round-trips.mjs';
import { LOGIN, ME, REFRESH, REVOKE } from './utils/routes.js';
import {
  createTestDatabase,
  describeOnPostgres,
  type TestDatabase,
} from './utils/test-database.js';
import type { TestResponse } from './utils/http.js';

/**
 * Issue 15 / decision 0034: the PostgreSQL hot paths in as few round trips as their guarantees
 * allow. Every statement the service sends is counted at the wire (a relay in front of the
 * server), so a flow that gains a query fails here, not only in the benchmark's report.
 */
describeOnPostgres('round trips to PostgreSQL per request', () => {
  let database: TestDatabase;
  let counter: RoundTripCounter;
  let t: TestApp;

  beforeAll(async () => {
    database = await createTestDatabase();
    const url = new URL(database.connectionString);
    counter = await startRoundTripCounter({ host: url.hostname, port: Number(url.port || 5432) });
    url.hostname = '127.0.0.1';
    url.port = String(counter.port);
    t = await createTestApp({ database: { ...database, connectionString: url.toString() } });
    // Warm up: the pool's connection is open and the named statements prepared.
    const warm = await registerUser(t);
    await t.post(LOGIN, { email: warm.email, password: DEFAULT_PASSWORD });
    await t.post(REFRESH, { refreshToken: warm.refreshToken });
  });

  afterAll(async () => {
    await t.close();
    await counter.close();
    await database.drop();
  });

  /** The round trips `request` made, counting what its answer still waited on. */
  async function roundTripsOf(
    request: () => Promise<TestResponse>,
  ): Promise<{ response: TestResponse; roundTrips: number }> {
    await delay(50);
    counter.reset();
    const response = await request();
    await delay(50);
    return { response, roundTrips: counter.count() };
  }

  it('should register in 2: the e-mail read and one statement that writes everything', async () => {
    const { roundTrips } = await roundTripsOf(async () => {
      await registerUser(t);
      return { status: 201 } as TestResponse;
    });
    expect(roundTrips).toBe(2);
  });

  it('should log in in 2: the account read and one statement that writes everything', async () => {
    const user = await registerUser(t);
    const { response, roundTrips } = await roundTripsOf(() =>
      t.post(LOGIN, { email: user.email, password: DEFAULT_PASSWORD }),
    );
    expect(response.status).toBe(200);
    expect(roundTrips).toBe(2);
  });

  it('should refresh in 1 and answer /me in 1', async () => {
    const user = await registerUser(t);
    const refreshed = await roundTripsOf(() =>
      t.post(REFRESH, { refreshToken: user.refreshToken }),
    );
    expect(refreshed.response.status).toBe(200);
    expect(refreshed.roundTrips).toBe(1);
    const me = await roundTripsOf(() => t.get(ME, user.accessToken));
    expect(me.response.status).toBe(200);
    expect(me.roundTrips).toBe(1);
  });

  it("should revoke in 2: the guard's account read and one statement", async () => {
    const user = await registerUser(t);
    const { response, roundTrips } = await roundTripsOf(() =>
      t.post(REVOKE, { refreshToken: user.refreshToken }, user.accessToken),
    );
    expect(response.status).toBe(200);
    expect(roundTrips).toBe(2);
  });

  it("should refuse another account's token in 2 as well, writing nothing", async () => {
    const owner = await registerUser(t);
    const other = await registerUser(t);
    const { response, roundTrips } = await roundTripsOf(() =>
      t.post(REVOKE, { refreshToken: owner.refreshToken }, other.accessToken),
    );
    expect(response.status).toBe(401);
    expect(roundTrips).toBe(2);
  });
});
