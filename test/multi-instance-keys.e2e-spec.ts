import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { runCliOn } from './utils/cli-process.js';
import { TEST_HASH_ITERATIONS, TEST_SECRET_KEY } from './utils/create-test-app.js';
import { UNAUTHORIZED_BODY } from './utils/expected-bodies.js';
import { httpRequest } from './utils/http.js';
import { decodeJwt } from './utils/jwt.js';
import { JWKS, ME, REGISTER } from './utils/routes.js';
import { asymmetricSigning } from './utils/signing-keys.js';
import { startServer, stopAllServers, type ServerProcess } from './utils/spawn-server.js';
import {
  createTestDatabase,
  describeOnPostgres,
  type TestDatabase,
} from './utils/test-database.js';

// Two real server processes on one PostgreSQL schema, and the admin CLI beside them: a change of
// the key set made anywhere reaches every instance within Keys__RefreshIntervalSeconds, with no
// restart. The intervals are shortened to a second so the test waits seconds, not minutes; the
// waits are bounded polls, and nothing is asserted about how fast a request is.

jest.setTimeout(120_000);

/** Each instance reads the set every second; a next key is published 1 + 1 s before it signs. */
const TIMING = { Keys__RefreshIntervalSeconds: '1', Keys__JwksMaxAgeSeconds: '1' };
/** Far longer than a reading takes, so only a change that never arrives fails the test. */
const BOUND_MS = 20_000;

function environment(database: TestDatabase): Record<string, string> {
  return {
    Jwt__SecretKey: TEST_SECRET_KEY,
    PasswordHashing__Iterations: String(TEST_HASH_ITERATIONS),
    ConnectionStrings__DefaultConnection: database.connectionString,
    TokenCleanup__Enabled: 'false',
    ...asymmetricSigning('ES256', TIMING),
  };
}

async function register(server: ServerProcess): Promise<string> {
  const response = await httpRequest(server.baseUrl, REGISTER, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      username: 'keys',
      email: `keys-${randomUUID()}@example.com`,
      password: 'S3cure!pass',
    }),
  });
  expect(response.status).toBe(201);
  return response.json<{ accessToken: string }>().accessToken;
}

async function meStatus(server: ServerProcess, token: string): Promise<number> {
  return (await httpRequest(server.baseUrl, ME, { headers: { authorization: `Bearer ${token}` } }))
    .status;
}

async function publishedKids(server: ServerProcess): Promise<string[]> {
  const response = await httpRequest(server.baseUrl, JWKS);
  return response
    .json<{ keys: { kid: string }[] }>()
    .keys.map((key) => key.kid)
    .sort();
}

/** Polls `check` until it holds, at most BOUND_MS. */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + BOUND_MS;
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error('the key set did not change within the bound');
    }
    await delay(100);
  }
}

describeOnPostgres('signing keys across instances on PostgreSQL', () => {
  let database: TestDatabase;
  let cwd: string;
  let servers: ServerProcess[];

  beforeEach(async () => {
    database = await createTestDatabase();
    cwd = mkdtempSync(join(tmpdir(), 'keygate-keys-'));
    servers = await Promise.all([1, 2].map(() => startServer({ env: environment(database), cwd })));
  });

  afterEach(async () => {
    await stopAllServers();
    rmSync(cwd, { recursive: true, force: true });
    await database.drop();
  });

  it('should make one first key when two instances start together, and verify its tokens on both', async () => {
    const rows = await database.query<{ kid: string }>('SELECT "kid" FROM "signing_keys"');

    expect(rows).toHaveLength(1);
    const token = await register(servers[0]);
    expect(decodeJwt(token).header.kid).toBe(rows[0].kid);
    for (const server of servers) {
      expect(await publishedKids(server)).toEqual([rows[0].kid]);
      expect(await meStatus(server, token)).toBe(200);
    }
  });

  it('should carry a rotation and a retirement made by the CLI to every instance, without a restart', async () => {
    const before = await register(servers[0]);
    const oldKid = decodeJwt(before).header.kid as string;

    const rotated = await runCliOn(database, ['keys:rotate'], cwd, environment(database));

    expect(rotated.code).toBe(0);
    const newKid = /key (\S+) as next/.exec(rotated.stdout)?.[1] ?? '';
    for (const server of servers) {
      await eventually(async () => (await publishedKids(server)).includes(newKid));
      await eventually(async () => decodeJwt(await register(server)).header.kid === newKid);
    }
    const after = await register(servers[1]);
    for (const server of servers) {
      expect(await meStatus(server, before)).toBe(200);
      expect(await meStatus(server, after)).toBe(200);
    }

    const retired = await runCliOn(database, ['keys:retire', oldKid], cwd, environment(database));

    expect(retired.code).toBe(0);
    for (const server of servers) {
      await eventually(async () => (await meStatus(server, before)) === 401);
      const refused = await httpRequest(server.baseUrl, ME, {
        headers: { authorization: `Bearer ${before}` },
      });
      expect(refused.json()).toEqual(UNAUTHORIZED_BODY);
      expect(await publishedKids(server)).toEqual([newKid]);
      expect(await meStatus(server, after)).toBe(200);
    }
  });
});
