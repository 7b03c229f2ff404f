import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { TEST_SECRET_KEY } from '../utils/create-test-app.js';
import { LOGIN, REGISTER } from '../utils/routes.js';
import { startServer, stopAllServers, waitForExit } from '../utils/spawn-server.js';
import { createTestDatabase, type TestDatabase } from '../utils/test-database.js';

describe('shutdown: SIGTERM drains in-flight requests', () => {
  let directory: string;
  let database: TestDatabase;

  beforeEach(async () => {
    directory = mkdtempSync(join(tmpdir(), 'keygate-shutdown-'));
    database = await createTestDatabase();
  });

  afterEach(async () => {
    await stopAllServers();
    await database.drop();
    rmSync(directory, { recursive: true, force: true });
  });

  it('should finish every in-flight request and exit 0 within 10 seconds', async () => {
    const server = await startServer({
      cwd: directory,
      env: {
        Jwt__SecretKey: TEST_SECRET_KEY,
        // Slow hashing keeps logins in flight when the signal arrives.
        PasswordHashing__Iterations: '300000',
        ConnectionStrings__DefaultConnection: database.connectionString,
      },
    });
    const credentials = { email: 'drain@example.com', password: 'S3cure!pass' };
    const registered = await fetch(`${server.baseUrl}${REGISTER}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'drain', ...credentials }),
    });
    expect(registered.status).toBe(201);

    // Each login is wholly sent before the signal, so that it is in flight at the server, not
    // still being connected by a busy test process (a fixed 100 ms was not always enough).
    const inFlight = Array.from({ length: 8 }, () => sentLogin(server.baseUrl, credentials));
    await Promise.all(inFlight.map(({ sent }) => sent));
    await delay(100);
    const signalledAt = Date.now();
    server.child.kill('SIGTERM');

    const statuses = await Promise.all(inFlight.map(({ status }) => status));
    expect(statuses).toEqual(Array(8).fill(200));
    const exit = await waitForExit(server, 10_000);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalledAt).toBeLessThan(10_000);
  }, 30_000);
});

/** A login posted with node:http: `sent` once its request is written out, then its status. */
function sentLogin(
  baseUrl: string,
  credentials: { email: string; password: string },
): { sent: Promise<void>; status: Promise<number> } {
  const body = JSON.stringify(credentials);
  let markSent: () => void = () => undefined;
  const sent = new Promise<void>((resolve) => {
    markSent = resolve;
  });
  const status = new Promise<number>((resolve, reject) => {
    const req = request(`${baseUrl}${LOGIN}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        connection: 'close',
      },
    });
    req.on('finish', markSent);
    req.on('error', reject);
    req.on('response', (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    req.end(body);
  });
  return { sent, status };
}
