import { createTestApp, type TestApp, useTestApp } from './utils/create-test-app.js';
import { errorBody } from './utils/expected-bodies.js';
import { HEALTH_LIVE, HEALTH_READY } from './utils/routes.js';
import { startTcpProxy, type TcpProxy } from './utils/tcp-proxy.js';
import {
  createTestDatabase,
  describeOnPostgres,
  TEST_POSTGRES_URL,
  type TestDatabase,
} from './utils/test-database.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const NO_CACHE = 'no-cache, no-store, must-revalidate';
const DATABASE_DOWN = 'The database did not answer.';
const MIGRATIONS_UNREADABLE = 'The migrations table could not be read.';
const UP = { status: 'up', responseTime: expect.any(Number) as number };
const READY_BODY = {
  status: 'ok',
  info: { database: UP, migrations: UP },
  error: {},
  details: { database: UP, migrations: UP },
};

function down(message: string): Record<string, unknown> {
  return { status: 'down', message, responseTime: expect.any(Number) };
}

interface MigrationRow {
  readonly id: number;
  readonly timestamp: string | number;
  readonly name: string;
}

describe('health', () => {
  const t = useTestApp();

  it('should answer live with 200 and an empty terminus result', async () => {
    const response = await t.get(HEALTH_LIVE);

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(JSON_TYPE);
    expect(response.headers.get('cache-control')).toBe(NO_CACHE);
    expect(response.json()).toEqual({ status: 'ok', info: {}, error: {}, details: {} });
  });

  it('should answer ready with 200 when the database answers and every migration has run', async () => {
    const response = await t.get(HEALTH_READY);

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(JSON_TYPE);
    expect(response.headers.get('cache-control')).toBe(NO_CACHE);
    expect(response.json()).toEqual(READY_BODY);
  });

  it.each([
    ['no Authorization header', undefined],
    ['an invalid bearer token', 'not-a-jwt'],
  ])('should need no token: %s', async (_label, token) => {
    const [live, ready] = await Promise.all([
      t.get(HEALTH_LIVE, token),
      t.get(HEALTH_READY, token),
    ]);

    expect([live.status, ready.status]).toEqual([200, 200]);
  });

  it.each(['/api/health/live', '/api/health/ready', '/api/health', '/health'])(
    'should not serve %s',
    async (path) => {
      const response = await t.get(path);

      expect(response.status).toBe(404);
      expect(response.json()).toEqual(errorBody(404, 'Not Found'));
    },
  );

  it('should answer ready with 503 and the failing indicators when the database is gone, live still 200', async () => {
    await t.dataSource.destroy();

    const ready = await t.get(HEALTH_READY);
    const live = await t.get(HEALTH_LIVE);

    expect(ready.status).toBe(503);
    expect(ready.headers.get('content-type')).toBe(JSON_TYPE);
    const failing = {
      database: down(DATABASE_DOWN),
      migrations: down(MIGRATIONS_UNREADABLE),
    };
    expect(ready.json()).toEqual({ status: 'error', info: {}, error: failing, details: failing });
    expect(live.status).toBe(200);
    expect(t.logger.at('error')).toEqual([]);
    expect(t.logger.at('warn').map((entry) => entry.text)).toEqual(
      expect.arrayContaining([
        expect.stringContaining('Readiness: the database round trip failed'),
        expect.stringContaining('Readiness: the migrations could not be read'),
      ]),
    );
  });

  it('should answer ready with 503 while a migration is pending, and 200 once it has run', async () => {
    const [latest] = await t.database.query<MigrationRow>(
      'SELECT id, timestamp, name FROM migrations ORDER BY timestamp DESC LIMIT 1',
    );
    await t.database.query('DELETE FROM migrations WHERE name = $1', [latest.name]);

    const pending = await t.get(HEALTH_READY);

    expect(pending.status).toBe(503);
    expect(pending.json()).toEqual({
      status: 'error',
      info: { database: UP },
      error: { migrations: down('1 migration(s) pending.') },
      details: { database: UP, migrations: down('1 migration(s) pending.') },
    });

    await t.database.query('INSERT INTO migrations (id, timestamp, name) VALUES ($1, $2, $3)', [
      latest.id,
      latest.timestamp,
      latest.name,
    ]);
    const applied = await t.get(HEALTH_READY);

    expect(applied.status).toBe(200);
    expect(applied.json()).toEqual(READY_BODY);
  });
});

describeOnPostgres('health: the PostgreSQL server becomes unreachable', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let t: TestApp;

  beforeEach(async () => {
    const server = new URL(TEST_POSTGRES_URL ?? '');
    proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
    database = await createTestDatabase();
    const viaProxy = new URL(database.connectionString);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    t = await createTestApp({
      database,
      environment: {
        ConnectionStrings__DefaultConnection: viaProxy.toString(),
        Database__ConnectionTimeoutMs: '1000',
      },
    });
  });

  afterEach(async () => {
    await t.close();
    await proxy.close();
    await database.drop();
  });

  it('should answer ready with 503 while the server is unreachable and 200 once it is back', async () => {
    expect((await t.get(HEALTH_READY)).status).toBe(200);

    await proxy.cut();
    const gone = await t.get(HEALTH_READY);

    expect(gone.status).toBe(503);
    const failing = {
      database: down(DATABASE_DOWN),
      migrations: down(MIGRATIONS_UNREADABLE),
    };
    expect(gone.json()).toEqual({ status: 'error', info: {}, error: failing, details: failing });
    expect((await t.get(HEALTH_LIVE)).status).toBe(200);

    await proxy.restore();
    const back = await t.get(HEALTH_READY);

    expect(back.status).toBe(200);
    expect(back.json()).toEqual(READY_BODY);
  });
});
