// Starting and stopping the processes under test: the built service (dist/main.js) and the
// baseline, each a separate node process whose output goes to a log file (not a pipe, so that
// draining it costs the harness nothing and a full pipe can never stall the server).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { setTimeout as delay } from 'node:timers/promises';
import { URL, fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const SERVICE_ENTRY = join(ROOT, 'dist/main.js');
export const BASELINE_ENTRY = join(ROOT, 'bench/baseline.mjs');
export const PG_BASELINE_ENTRY = join(ROOT, 'bench/baseline-pg.mjs');

/** Longest a start-up may take before the run is abandoned. */
const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 10_000;

/** Every process started here, so that an aborted run can still stop them all. */
const running = new Set();

/** A port that was free a moment ago. */
export async function freePort() {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * The service's environment: production mode, the real password cost (PasswordHashing__Iterations
 * is deliberately not set), no background cleanup that could fire mid-measurement. Only PATH is
 * taken from the harness's own environment, and the working directory is the run's temporary
 * folder, so a developer's .env in the project cannot change what is measured.
 */
export function serviceEnv({ port, secret, connectionString }) {
  return {
    // eslint-disable-next-line no-restricted-syntax -- the child needs PATH and nothing else.
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(port),
    Jwt__SecretKey: secret,
    ConnectionStrings__DefaultConnection: connectionString,
    TokenCleanup__Enabled: 'false',
    // Two instances share the machine; metrics stay on, on a port each picks.
    Management__Port: '0',
    NO_COLOR: '1',
  };
}

/** Spawns `node <args>` with output to `logFile`; returns a handle with pid, url and stop(). */
export function spawnNode({ name, args, env, cwd, port, logFile }) {
  const log = openSync(logFile, 'a');
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', log, log] });
  closeSync(log);
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const handle = {
    name,
    pid: child.pid,
    url: `http://127.0.0.1:${port}`,
    exited,
    hasExited: false,
    logTail: () => readFileSync(logFile, 'utf8').slice(-2_000),
    stop: () => stopProcess(child, handle),
  };
  void exited.then(({ code, signal }) => {
    handle.hasExited = true;
    handle.exitInfo = { code, signal };
    running.delete(handle);
  });
  running.add(handle);
  return handle;
}

async function stopProcess(child, handle) {
  if (handle.hasExited) {
    return handle.exited;
  }
  child.kill('SIGTERM');
  const timer = delay(STOP_TIMEOUT_MS).then(() => 'timeout');
  if ((await Promise.race([handle.exited, timer])) === 'timeout') {
    child.kill('SIGKILL');
  }
  return handle.exited;
}

/** Stops every process still running; used on the way out, whatever happened. */
export async function stopAll() {
  await Promise.all([...running].map((handle) => handle.stop()));
}

/**
 * Resolves with the time (performance.now()) of the first HTTP answer to GET /api/auth/me
 * without a token, which answers 401 once the app is fully up (routes, guard and database).
 * Polls every 5 ms; a refused connection simply means "not yet".
 */
export async function waitForFirstAnswer(handle, timeoutMs = START_TIMEOUT_MS) {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (handle.hasExited) {
      throw new Error(`${handle.name} exited during start-up:\n${handle.logTail()}`);
    }
    const status = await probe(`${handle.url}/api/auth/me`);
    if (status === 401) {
      return performance.now();
    }
    await delay(5);
  }
  throw new Error(`${handle.name} gave no answer within ${timeoutMs} ms:\n${handle.logTail()}`);
}

/** The status of one GET, or 0 when the connection fails. */
function probe(url) {
  return new Promise((resolve) => {
    const req = request(url, { agent: false, timeout: 1_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}
