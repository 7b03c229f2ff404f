import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createConnection, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';

/** The built server; `npx nest build` must have run first. */
export const SERVER_ENTRY = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

/** Upper bound for a crash or a shutdown of the real process. */
export const PROCESS_TIMEOUT_MS = 10_000;

/**
 * Upper bound for a start-up. Not a guarantee of the service (the benchmark times start-up):
 * several processes starting together on two busy cores can take a while.
 */
export const STARTUP_TIMEOUT_MS = 30_000;

export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface ServerProcess {
  readonly port: number;
  /** `http://127.0.0.1:<port>`. */
  readonly baseUrl: string;
  readonly child: ChildProcess;
  /** Settles once the process has exited. */
  readonly exited: Promise<ExitInfo>;
  stdout(): string;
  stderr(): string;
  /** Sends `signal` (SIGTERM by default) and waits, bounded, for the exit; SIGKILL after that. */
  stop(signal?: NodeJS.Signals): Promise<ExitInfo>;
}

export interface SpawnServerOptions {
  /**
   * The only variables the child sees, besides PATH, HOST, PORT, NO_COLOR and Management__Port
   * (0 unless given, so servers side by side never compete for the default port).
   */
  readonly env: Readonly<Record<string, string>>;
  /** Working directory: where `.env` and the default `data/keygate.db` are looked for. */
  readonly cwd: string;
  /**
   * The port to listen on, when the environment must name it first (an OpenID provider's issuer);
   * findFreePort()'s otherwise.
   */
  readonly port?: number;
}

const running = new Set<ServerProcess>();

/** Ports each Jest worker's range holds; the ranges lie below Linux's ephemeral ports (32768 on). */
const PORTS_PER_WORKER = 5_000;
const FIRST_PORT = 10_000;
const WORKER_RANGES = 4;

// eslint-disable-next-line no-restricted-syntax -- Jest numbers its workers from 1.
const WORKER = Math.max(Number(process.env.JEST_WORKER_ID ?? '1'), 1);
const LOWEST_PORT = FIRST_PORT + ((WORKER - 1) % WORKER_RANGES) * PORTS_PER_WORKER;
/**
 * The next port to try, as an offset into the worker's range: handed out in turn, so servers
 * started together (none has bound yet) never get the same one; a random start keeps a test file
 * off the ports the previous one used.
 */
let nextOffset = Math.floor(Math.random() * PORTS_PER_WORKER);

/**
 * A port that was free a moment ago, from a range of this Jest worker's own. A port the kernel
 * picked (port 0) could be picked again for another worker's server between its release here and
 * the child's bind, and that server would then answer this test's requests (seen once in CI: a
 * token signed with another server's secret).
 */
export async function findFreePort(): Promise<number> {
  for (let tries = 0; tries < 100; tries++) {
    const port = LOWEST_PORT + nextOffset;
    nextOffset = (nextOffset + 1) % PORTS_PER_WORKER;
    if (await isFree(port)) {
      return port;
    }
  }
  throw new Error(
    `findFreePort: no free port between ${LOWEST_PORT} and ${LOWEST_PORT + PORTS_PER_WORKER}`,
  );
}

/** Whether a listener can bind `port` on loopback now (it is released at once). */
async function isFree(port: number): Promise<boolean> {
  const server = createServer();
  const bound = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (bound) {
    server.close();
    await once(server, 'close');
  }
  return bound;
}

/** Starts `node dist/main.js` with exactly the given environment; does not wait for it. */
export async function spawnServer(options: SpawnServerOptions): Promise<ServerProcess> {
  const port = options.port ?? (await findFreePort());
  const env: Record<string, string> = {
    // The child needs PATH and nothing else from the developer's environment.
    // eslint-disable-next-line no-restricted-syntax
    PATH: process.env.PATH ?? '',
    HOST: '127.0.0.1',
    PORT: String(port),
    NO_COLOR: '1',
    Management__Port: '0',
    ...options.env,
  };
  const child = spawn(process.execPath, [SERVER_ENTRY], {
    cwd: options.cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: null, signal: null }));
  });

  const server: ServerProcess = {
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    child,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal);
      }
      const info = await within(exited, PROCESS_TIMEOUT_MS);
      if (info !== null) {
        return info;
      }
      child.kill('SIGKILL');
      return exited;
    },
  };
  running.add(server);
  void exited.then(() => running.delete(server));
  return server;
}

/** Resolves once the server accepts TCP connections; rejects if it exits or takes too long. */
export async function waitUntilListening(
  server: ServerProcess,
  timeoutMs = STARTUP_TIMEOUT_MS,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let hasExited = false;
  void server.exited.then(() => {
    hasExited = true;
  });
  while (Date.now() < deadline) {
    if (hasExited) {
      throw new Error(`server exited before listening:\n${server.stderr()}${server.stdout()}`);
    }
    if (await canConnect(server.port)) {
      return;
    }
    await delay(50);
  }
  throw new Error(`server did not listen within ${timeoutMs} ms:\n${server.stderr()}`);
}

/** Spawns the server and waits until it listens. */
export async function startServer(options: SpawnServerOptions): Promise<ServerProcess> {
  const server = await spawnServer(options);
  try {
    await waitUntilListening(server);
  } catch (error: unknown) {
    await server.stop('SIGKILL');
    throw error;
  }
  return server;
}

/** Waits, bounded, for the process to exit on its own; kills it and rejects on timeout. */
export async function waitForExit(
  server: ServerProcess,
  timeoutMs = PROCESS_TIMEOUT_MS,
): Promise<ExitInfo> {
  const info = await within(server.exited, timeoutMs);
  if (info === null) {
    await server.stop('SIGKILL');
    throw new Error(`server did not exit within ${timeoutMs} ms:\n${server.stdout()}`);
  }
  return info;
}

/** Kills every process spawned here that is still running. Call it in afterEach. */
export async function stopAllServers(): Promise<void> {
  await Promise.all([...running].map((server) => server.stop('SIGKILL')));
}

/** The promise's value, or null once `ms` have passed; the timer never outlives the call. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  const abort = new AbortController();
  const timeout = delay(ms, null, { signal: abort.signal }).catch(() => null);
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    abort.abort();
  }
}

/** True when something on 127.0.0.1 accepts a TCP connection on `port`. */
export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => {
      socket.destroy();
      resolve(false);
    });
  });
}
