import type { DynamicModule, Type } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test, type TestingModuleBuilder } from '@nestjs/testing';
import { NativeLogger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { AppModule } from '../../src/app.module.js';
import { configureApp, createHttpAdapter } from '../../src/app.setup.js';
import { RandomSource } from '../../src/common/random/random-source.js';
import { Clock } from '../../src/common/time/clock.js';
import type { KeygateExtension } from '../../src/database/keygate-extension.js';
import { ManagementServer } from '../../src/metrics/management-server.js';
import { AppConfig } from '../../src/config/app-config.js';
import { FakeClock } from './fake-clock.js';
import { httpRequest, type TestResponse } from './http.js';
import { testLogSink, type LogCapture } from './log-capture.js';
import { RecordingLogger } from './recording-logger.js';
import { recordRoutes, type RegisteredRoute } from './route-table.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

export type { TestResponse } from './http.js';

/** A test secret: long enough, and never the sample placeholder. */
export const TEST_SECRET_KEY = 'e2e-test-secret-key-0123456789abcdef-0123456789';
/** Cheap hashing keeps the suite fast; the format and the code path are the production ones. */
export const TEST_HASH_ITERATIONS = 1000;

export interface TestApp {
  readonly app: NestFastifyApplication;
  readonly clock: FakeClock;
  /** What Nest's Logger wrote, unless the app was created with `pinoLogs`. */
  readonly logger: RecordingLogger;
  /**
   * What pino wrote while this app was open: the request lines, and with `pinoLogs` everything
   * Nest's Logger wrote as well. JSON lines, as in production.
   */
  readonly logs: LogCapture;
  readonly dataSource: DataSource;
  /** The database behind this app: a SQLite file, or a PostgreSQL schema under `npm run test:pg`. */
  readonly database: TestDatabase;
  readonly environment: Readonly<Record<string, string>>;
  /** `http://127.0.0.1:<port>` of the listening app. */
  readonly baseUrl: string;
  /** Every route the app registered, as Fastify saw it. */
  readonly routes: readonly RegisteredRoute[];
  /** A raw HTTP request over the loopback interface. */
  request(path: string, init?: RequestInit): Promise<TestResponse>;
  /** POSTs a JSON body (serialised unless it is already a string), with a bearer token when given. */
  post(path: string, body: unknown, accessToken?: string): Promise<TestResponse>;
  get(path: string, accessToken?: string): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Environment keys on top of the test defaults. */
  readonly environment?: Readonly<Record<string, string>>;
  /** Reuse the database of an earlier app (restart tests); a fresh one otherwise. */
  readonly database?: TestDatabase;
  readonly clock?: FakeClock;
  /** Randomness for ids and token values, request ids included; node:crypto's by default. */
  readonly random?: RandomSource;
  /** Replaces providers, e.g. to inject a failure: `(b) => b.overrideProvider(X).useValue(y)`. */
  readonly override?: (builder: TestingModuleBuilder) => TestingModuleBuilder;
  /** Modules mounted next to AppModule, as a team would add its own (see docs/development.md, Extending). */
  readonly imports?: ReadonlyArray<Type | DynamicModule>;
  /** Extensions mounted as src/extensions.ts mounts them: modules with their migrations. */
  readonly extensions?: readonly KeygateExtension[];
  /**
   * Nest's Logger writes through pino into `logs`, as in production, instead of into `logger`.
   * Every app of a test file shares one pino logger, built for the first (see LogSink), so all
   * of them must agree on Logging__Level.
   */
  readonly pinoLogs?: boolean;
  /** The loopback port to listen on (freePort()); any free one by default. */
  readonly port?: number;
}

/**
 * Boots the real AppModule on Fastify with the same configureApp() and management listener as
 * main.ts (the listener on a free port), on a fresh database (a temporary SQLite file in WAL
 * mode, or a PostgreSQL schema under `npm run test:pg`; migrations run at start-up), with a
 * movable clock.
 */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase());
  const ownsDatabase = options.database === undefined;
  const environment = {
    NODE_ENV: 'test',
    Jwt__SecretKey: TEST_SECRET_KEY,
    PasswordHashing__Iterations: String(TEST_HASH_ITERATIONS),
    ConnectionStrings__DefaultConnection: database.connectionString,
    // Apps side by side in one process must not all want the default management port.
    Management__Port: '0',
    ...options.environment,
  };
  const clock = options.clock ?? new FakeClock();
  const random = options.random ?? new RandomSource();
  const logger = new RecordingLogger();

  const builder = Test.createTestingModule({
    imports: [
      await AppModule.forRoot({
        environment,
        logDestination: testLogSink,
        extensions: options.extensions,
      }),
      ...(options.imports ?? []),
    ],
  })
    .overrideProvider(Clock)
    .useValue(clock)
    .overrideProvider(RandomSource)
    .useValue(random)
    .setLogger(logger);
  const moduleRef = await (options.override?.(builder) ?? builder).compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(createHttpAdapter(random), {
    bodyParser: false,
    logger,
  });
  const routes = recordRoutes(app);
  const logs = testLogSink.open(app.get(AppConfig).logging.level);
  if (options.pinoLogs === true) {
    app.useLogger(app.get(NativeLogger));
  }
  configureApp(app);
  await app.listen(options.port ?? 0, '127.0.0.1');
  await app.get(ManagementServer).start();
  const baseUrl = await app.getUrl();

  const request = (path: string, init?: RequestInit): Promise<TestResponse> =>
    httpRequest(baseUrl, path, init);
  const bearer = (accessToken?: string): Record<string, string> =>
    accessToken === undefined ? {} : { authorization: `Bearer ${accessToken}` };
  return {
    app,
    clock,
    logger,
    logs,
    dataSource: app.get(DataSource),
    database,
    environment,
    baseUrl,
    routes,
    request,
    post: (path, body, accessToken) =>
      request(path, {
        method: 'POST',
        body: typeof body === 'string' ? body : JSON.stringify(body),
        headers: { 'content-type': 'application/json', ...bearer(accessToken) },
      }),
    get: (path, accessToken) => request(path, { headers: bearer(accessToken) }),
    close: async () => {
      await app.close();
      testLogSink.close(logs);
      if (ownsDatabase) {
        await database.drop();
      }
    },
  };
}

/** Options, or a function that makes them anew for each app (a clock set to the real now). */
type Options = TestAppOptions | (() => TestAppOptions);

/**
 * A fresh test app for every test of the enclosing block, closed after each. What it returns
 * stands for the app of the running test, so a test writes `t.post(...)` as with its own.
 */
export function useTestApp(options: Options = {}): TestApp {
  return appOfHooks(options, beforeEach, afterEach);
}

/** One test app shared by every test of the enclosing block, closed after the last. */
export function useSharedTestApp(options: Options = {}): TestApp {
  return appOfHooks(options, beforeAll, afterAll);
}

type Hook = (run: () => Promise<void>) => void;

function appOfHooks(options: Options, open: Hook, close: Hook): TestApp {
  let current: TestApp | undefined;
  open(async () => {
    current = await createTestApp(typeof options === 'function' ? options() : options);
  });
  close(async () => {
    await current?.close();
    current = undefined;
  });
  return new Proxy({} as TestApp, {
    get: (_target, property) => {
      if (current === undefined) {
        throw new Error('The test app exists only while the tests of its block run');
      }
      return Reflect.get(current, property) as unknown;
    },
  });
}
