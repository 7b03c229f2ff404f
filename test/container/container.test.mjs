/* eslint-disable no-restricted-syntax -- the secret and TEST_PG_URL reach podman and psql through the environment. */
/* global fetch, AbortSignal -- Node's own, since Node 18. */
// `npm run test:container`: builds the image from this repository with podman, as a user would
// (`podman build --format docker -t … .`), then runs it as a user would and checks what the image
// promises (docs/deployment.md#container-image): SQLite on a volume at /data with a read-only
// root, a session that survives a restart, uid 1000, a graceful stop on SIGTERM, the
// HEALTHCHECK; and the compose file's several-instance deployment on PostgreSQL: the one-shot
// migration, then two instances that accept each other's tokens.
//
// Needs (as root): podman with runc, debootstrap, and a PostgreSQL server (TEST_PG_URL, or trust
// auth on 127.0.0.1:5432 as postgres). The base image (node:26-bookworm-slim) cannot be pulled
// here, so test/container/base-image.sh builds it from Debian's packages and the npm registry
// once. Only this harness uses the flags this machine's sandbox needs (runc, ulimits, host
// networking, npm's certificate bundle and nodedir for the build, mounted for the build only).
// Every name it makes starts with keygate-test-; it removes its containers, volume and database.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { clearTimeout, setTimeout } from 'node:timers';
import { fileURLToPath, URL } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const IMAGE = 'localhost/keygate-test-image:latest';
const BASE_IMAGE = 'docker.io/library/node:26-bookworm-slim';
/**
 * The whole run, image builds included, stops here. Cold, the base image takes 2 to 3 minutes and
 * the image 5 to 6 on an idle 2-core machine, but the image took over 15 on one shared with
 * other work (load average 22): hence the room.
 */
const DEADLINE_MS = 60 * 60_000;
const RUN_ID = `${process.pid}-${randomBytes(3).toString('hex')}`;
/** This machine's sandbox: runc, explicit ulimits, the host's network. Not what users type. */
const ENGINE = ['--runtime', 'runc'];
const SANDBOX = [
  '--ulimit',
  'nofile=1024:4096',
  '--ulimit',
  'nproc=1024:4096',
  '--network',
  'host',
];
/** As Docker's and compose's read-only root: podman would add a writable /tmp of its own. */
const READ_ONLY = ['--read-only', '--read-only-tmpfs=false'];
const CA_BUNDLE = process.env.NODE_EXTRA_CA_CERTS || '/etc/ssl/certs/ca-certificates.crt';
const PG_ADMIN_URL = process.env.TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

const startedAt = Date.now();
const results = [];
const containers = new Set();
const volumes = new Set();
let database = null;
const figures = {};

// The secret every instance shares: in this process's environment only, handed to podman by
// name (`-e Jwt__SecretKey`), so it is on no command line and in no log.
process.env.Jwt__SecretKey = randomBytes(48).toString('base64url');

function remainingMs() {
  return DEADLINE_MS - (Date.now() - startedAt);
}

/**
 * Runs a command to its end, or to its timeout: then SIGTERM, so that podman removes what it made
 * (a killed build leaves its working containers), and SIGKILL 20 s later. Never throws. Past the
 * run's deadline every command gets a second, but clean-up keeps its own timeouts.
 */
function run(command, args, { timeoutMs = 60_000, env, input, cleanUp = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      env: env ?? process.env,
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    if (input !== undefined) {
      child.stdin.end(input);
    }
    const limit = cleanUp ? timeoutMs : Math.max(1_000, Math.min(timeoutMs, remainingMs()));
    let killer;
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    }, limit);
    child.on('error', (error) => {
      clearTimeout(timer);
      clearTimeout(killer);
      resolve({ code: -1, stdout, stderr: `${stderr}${error.message}`, timedOut: false });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(killer);
      resolve({ code: code ?? -1, signal, stdout, stderr, timedOut: signal !== null });
    });
  });
}

function say(text) {
  process.stdout.write(`${text}\n`);
}

const podman = (args, options) => run('podman', [...ENGINE, ...args], options);

function record(name, ok, detail = '') {
  results.push({ name, ok });
  say(`${ok ? 'ok' : 'not ok'} - ${name}${ok || !detail ? '' : `\n    ${detail}`}`);
  return ok;
}

function expectEqual(name, actual, expected) {
  return record(
    name,
    actual === expected,
    `expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`,
  );
}

function tail(text, lines = 20) {
  return text.trim().split('\n').slice(-lines).join('\n    ');
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function freePorts(count) {
  const ports = new Set();
  while (ports.size < count) {
    ports.add(await freePort());
  }
  return [...ports];
}

async function http(port, method, path, body, headers = {}) {
  try {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(15_000),
    });
    const text = await response.text();
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    return { status: response.status, json, text };
  } catch (error) {
    return { status: 0, json: null, text: String(error) };
  }
}

/** Polls GET path until it answers 200, the container stops, or timeoutMs passes. */
async function waitFor200(port, path, container, timeoutMs = 90_000) {
  const until = Date.now() + Math.min(timeoutMs, remainingMs());
  let last = { status: 0, text: '' };
  while (Date.now() < until) {
    last = await http(port, 'GET', path);
    if (last.status === 200) {
      return last;
    }
    const state = await podman(['inspect', '--format', '{{.State.Running}}', container]);
    if (state.stdout.trim() !== 'true') {
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return last;
}

async function logsOf(container) {
  const logs = await podman(['logs', container]);
  return `${logs.stdout}${logs.stderr}`;
}

/** podman run -d with this machine's flags; the secret by name only. */
async function startContainer(name, env, extra = []) {
  const envArgs = Object.entries(env).flatMap(([key, value]) => ['-e', `${key}=${value}`]);
  const started = await podman(
    ['run', '-d', '--name', name, ...SANDBOX, '-e', 'Jwt__SecretKey', ...envArgs, ...extra, IMAGE],
    { timeoutMs: 60_000 },
  );
  if (started.code === 0) {
    containers.add(name);
    // The image's VOLUME gives a container without -v an anonymous volume: removed with it.
    const mounts = await podman([
      'inspect',
      '--format',
      '{{range .Mounts}}{{.Name}} {{end}}',
      name,
    ]);
    for (const volume of mounts.stdout.trim().split(/\s+/).filter(Boolean)) {
      volumes.add(volume);
    }
  }
  return started;
}

async function execIn(container, args) {
  return podman(['exec', container, ...args], { timeoutMs: 30_000 });
}

function uniqueUser(tag) {
  const suffix = `${tag}${randomBytes(4).toString('hex')}`;
  return {
    username: `container-${suffix}`,
    email: `container-${suffix}@example.com`,
    password: 'S3cure!pass-container',
  };
}

function isAuthResponse(body) {
  return (
    body !== null &&
    typeof body.accessToken === 'string' &&
    typeof body.refreshToken === 'string' &&
    typeof body.user?.id === 'string'
  );
}

// ---------------------------------------------------------------------------------------------

async function buildImages() {
  const baseExists = (await podman(['image', 'exists', BASE_IMAGE])).code === 0;
  const baseStarted = Date.now();
  const base = await run('bash', [join(ROOT, 'test/container/base-image.sh')], {
    timeoutMs: 15 * 60_000,
  });
  if (!baseExists) {
    figures.baseImageBuildSeconds = (Date.now() - baseStarted) / 1000;
  }
  if (
    !record(
      'the base image node:26-bookworm-slim is there',
      base.code === 0,
      tail(base.stdout + base.stderr),
    )
  ) {
    return false;
  }

  // The documented build (`podman build --format docker -t keygate .`), plus this machine's
  // flags. npm in the build stage reads its global npmrc (/usr/local/etc/npmrc): mounted here for
  // the build's RUN steps only, it names the certificate bundle (also mounted) and the base image's
  // own Node headers, so better-sqlite3 compiles with nothing downloaded from elsewhere.
  // A fixed path with fixed contents, kept between runs (a few bytes): nothing to clean up.
  const scratch = join(tmpdir(), 'keygate-test-build');
  mkdirSync(scratch, { recursive: true });
  const npmrc = join(scratch, 'npmrc');
  writeFileSync(npmrc, 'cafile=/usr/local/etc/keygate-build-ca.crt\nnodedir=/usr/local\n');
  const buildStarted = Date.now();
  const build = await podman(
    [
      'build',
      '--format',
      'docker',
      '-t',
      IMAGE,
      ...SANDBOX,
      '-v',
      `${npmrc}:/usr/local/etc/npmrc:ro`,
      '-v',
      `${CA_BUNDLE}:/usr/local/etc/keygate-build-ca.crt:ro`,
      ROOT,
    ],
    { timeoutMs: 40 * 60_000 },
  );
  figures.imageBuildSeconds = (Date.now() - buildStarted) / 1000;
  figures.cachedSteps = (build.stdout.match(/Using cache/g) ?? []).length;
  return record(
    'the image builds from the repository',
    build.code === 0,
    `${build.timedOut ? 'timed out; ' : ''}${tail(build.stdout + build.stderr)}`,
  );
}

async function checkImageConfig() {
  const inspected = await podman(['image', 'inspect', IMAGE]);
  const [image] = JSON.parse(inspected.stdout || '[{}]');
  const config = image.Config ?? {};
  figures.imageSizeBytes = image.Size;
  const env = Object.fromEntries(
    (config.Env ?? []).map((line) => line.split(/=(.*)/s).slice(0, 2)),
  );
  expectEqual('the image runs as uid 1000', config.User, '1000:1000');
  expectEqual('NODE_ENV is production', env.NODE_ENV, 'production');
  expectEqual('the service listens on port 3000 by default', env.PORT, '3000');
  record('port 3000 is exposed', Object.keys(config.ExposedPorts ?? {}).join(',') === '3000/tcp');
  expectEqual(
    'the SQLite default is /data/keygate.db',
    env.ConnectionStrings__DefaultConnection,
    'Data Source=/data/keygate.db',
  );
  record('/data is a volume', Object.keys(config.Volumes ?? {}).join(',') === '/data');
  expectEqual(
    'the command is node itself (PID 1)',
    JSON.stringify(config.Cmd),
    '["node","dist/main.js"]',
  );
  const healthcheck = (image.Healthcheck ?? config.Healthcheck)?.Test ?? [];
  record(
    'the HEALTHCHECK asks /health/live with node',
    healthcheck[0] === 'CMD' &&
      healthcheck[1] === 'node' &&
      healthcheck.join(' ').includes('/health/live'),
    JSON.stringify(healthcheck),
  );
  record(
    'no secret nor build setting is in the image environment',
    !Object.keys(env).some((key) => /secret|password|^npm_config/i.test(key)),
    Object.keys(env).join(', '),
  );

  // What the files are: the image's own build of better-sqlite3 for its Node, production
  // dependencies only, the mail templates, and none of the host's or the build's files.
  const probe = await podman(
    [
      'run',
      '--rm',
      ...SANDBOX,
      ...READ_ONLY,
      IMAGE,
      'node',
      '-e',
      `const fs = require('fs');
       const db = new (require('better-sqlite3'))(':memory:');
       console.log(JSON.stringify({
         sqlite: db.prepare('select sqlite_version() v').get().v,
         node: process.versions.node,
         templates: fs.readdirSync('/app/templates/mail').length,
         exists: Object.fromEntries(['/app/.env', '/app/src', '/app/test', '/app/data',
           '/app/node_modules/@nestjs/cli', '/app/node_modules/jest', '/app/node_modules/typescript', '/app/dist/main.js',
           '/app/dist/database/data-source.js', '/usr/local/etc/npmrc',
           '/usr/local/etc/keygate-build-ca.crt'].map((p) => [p, fs.existsSync(p)])),
       }));`,
    ],
    { timeoutMs: 60_000 },
  );
  let facts = null;
  try {
    facts = JSON.parse(probe.stdout.trim().split('\n').pop());
  } catch {
    // reported below
  }
  if (
    !record(
      'better-sqlite3 loads in the image (built for its Node)',
      facts !== null,
      tail(probe.stdout + probe.stderr),
    )
  ) {
    return;
  }
  expectEqual('the image runs Node 26', facts.node.split('.')[0], '26');
  expectEqual('the 15 mail templates are in the image', facts.templates, 15);
  expectEqual('dist/ is in the image', facts.exists['/app/dist/main.js'], true);
  expectEqual(
    'the migrations data source is in the image',
    facts.exists['/app/dist/database/data-source.js'],
    true,
  );
  for (const path of [
    '/app/.env',
    '/app/src',
    '/app/test',
    '/app/data',
    '/app/node_modules/@nestjs/cli',
    '/app/node_modules/jest',
    '/app/node_modules/typescript',
  ]) {
    expectEqual(`${path} is not in the image`, facts.exists[path], false);
  }
  expectEqual(
    'the build-only npmrc did not reach the image',
    facts.exists['/usr/local/etc/npmrc'],
    false,
  );
  expectEqual(
    'the build-only CA bundle did not reach the image',
    facts.exists['/usr/local/etc/keygate-build-ca.crt'],
    false,
  );
}

async function checkRefusesWithoutSecret() {
  const [port, managementPort] = await freePorts(2);
  const refused = await run(
    'podman',
    [
      ...ENGINE,
      'run',
      '--rm',
      ...SANDBOX,
      ...READ_ONLY,
      '-e',
      `PORT=${port}`,
      '-e',
      `Management__Port=${managementPort}`,
      IMAGE,
    ],
    { timeoutMs: 60_000, env: { ...process.env, Jwt__SecretKey: '' } },
  );
  record(
    'without Jwt__SecretKey the container refuses to start (exit 1, one line why)',
    refused.code === 1 && /Keygate failed to start: .*Jwt__SecretKey/.test(refused.stderr),
    `exit ${refused.code}: ${tail(refused.stderr, 5)}`,
  );
}

async function checkSqlite() {
  const name = `keygate-test-${RUN_ID}-sqlite`;
  const volume = `keygate-test-${RUN_ID}-data`;
  const created = await podman(['volume', 'create', volume]);
  if (!record('a named volume for /data', created.code === 0, created.stderr)) {
    return;
  }
  volumes.add(volume);
  const [port, managementPort] = await freePorts(2);
  const started = await startContainer(name, { PORT: port, Management__Port: managementPort }, [
    ...READ_ONLY,
    '-v',
    `${volume}:/data`,
  ]);
  if (
    !record(
      'the SQLite container starts with --read-only and /data on a volume',
      started.code === 0,
      started.stderr,
    )
  ) {
    return;
  }

  const ready = await waitFor200(port, '/health/ready', name);
  if (!expectEqual('readiness answers 200 on SQLite', ready.status, 200)) {
    say(`    ${tail(await logsOf(name))}`);
    return;
  }
  expectEqual('liveness answers 200', (await http(port, 'GET', '/health/live')).status, 200);

  const user = uniqueUser('s');
  const registered = await http(port, 'POST', '/api/auth/register', user);
  expectEqual('register answers 201', registered.status, 201);
  record('register returns an auth response', isAuthResponse(registered.json), registered.text);
  const loggedIn = await http(port, 'POST', '/api/auth/login', {
    email: user.email,
    password: user.password,
  });
  expectEqual('login answers 200', loggedIn.status, 200);
  const refreshed = await http(port, 'POST', '/api/auth/refresh', {
    refreshToken: loggedIn.json?.refreshToken,
  });
  expectEqual('refresh answers 200', refreshed.status, 200);
  record(
    'refresh rotates the token',
    isAuthResponse(refreshed.json) && refreshed.json.refreshToken !== loggedIn.json?.refreshToken,
  );
  const me = await http(port, 'GET', '/api/auth/me', undefined, {
    authorization: `Bearer ${refreshed.json?.accessToken}`,
  });
  expectEqual('me answers 200 with the refreshed access token', me.status, 200);
  expectEqual('me names the user', me.json?.email, user.email);

  // The process and the file system.
  expectEqual(
    'the service runs as uid 1000',
    (await execIn(name, ['id', '-u'])).stdout.trim(),
    '1000',
  );
  const status = (await execIn(name, ['cat', '/proc/1/status'])).stdout;
  const uids = /^Uid:\s+(.*)$/m.exec(status)?.[1].split(/\s+/) ?? [];
  record(
    'PID 1 has uid 1000 (real, effective, saved)',
    uids.length === 4 && uids.every((uid) => uid === '1000'),
    uids.join(' '),
  );
  const cmdline = (await execIn(name, ['cat', '/proc/1/cmdline'])).stdout.split('\0');
  expectEqual('PID 1 is node dist/main.js', cmdline.slice(0, 2).join(' '), 'node dist/main.js');
  // /home/node belongs to uid 1000: a write there fails only because the root is read-only.
  const write = (path) =>
    execIn(name, [
      'node',
      '-e',
      `try { require('fs').writeFileSync(${JSON.stringify(path)}, 'x'); console.log('written') } catch (e) { console.log(e.code) }`,
    ]);
  expectEqual(
    'a write to /home/node fails: read-only file system',
    (await write('/home/node/probe')).stdout.trim(),
    'EROFS',
  );
  expectEqual(
    'a write to /app fails: read-only file system',
    (await write('/app/probe')).stdout.trim(),
    'EROFS',
  );
  expectEqual('a write to /data succeeds', (await write('/data/probe')).stdout.trim(), 'written');
  // As Docker's --read-only: no tmpfs on /tmp either; the service needs none.
  expectEqual(
    'a write to /tmp fails: read-only file system',
    (await write('/tmp/probe')).stdout.trim(),
    'EROFS',
  );
  const dbFile = await execIn(name, [
    'node',
    '-e',
    "console.log(require('fs').statSync('/data/keygate.db').isFile())",
  ]);
  expectEqual('the database is /data/keygate.db', dbFile.stdout.trim(), 'true');
  // The admin CLI runs beside the service, in its container, on the read-only root.
  const audit = await execIn(name, ['node', 'dist/cli.js', 'audit', user.email, '--limit', '10']);
  record(
    'the admin CLI in the container shows the audit trail (audit <email>)',
    audit.code === 0 &&
      audit.stdout.includes(`Audit trail of ${user.email}`) &&
      audit.stdout.includes('login_succeeded') &&
      audit.stdout.includes('token_refreshed'),
    `exit ${audit.code}: ${tail(audit.stdout + audit.stderr, 8)}`,
  );

  const health = await podman(['healthcheck', 'run', name], { timeoutMs: 30_000 });
  expectEqual('podman healthcheck run passes', health.code, 0);

  // A graceful stop: SIGTERM, then exit 0 well within the engine's 10 s grace period.
  const stopStarted = Date.now();
  const stopped = await podman(['stop', '--time', '10', name], { timeoutMs: 30_000 });
  const stopSeconds = (Date.now() - stopStarted) / 1000;
  figures.stopSeconds = stopSeconds;
  record('podman stop returns', stopped.code === 0, stopped.stderr);
  record(`podman stop takes under 5 s (${stopSeconds.toFixed(1)} s)`, stopSeconds < 5);
  const exit = await podman(['inspect', '--format', '{{.State.ExitCode}}', name]);
  expectEqual('the service exits 0 on SIGTERM', exit.stdout.trim(), '0');
  record('the service logs its SIGTERM drain', (await logsOf(name)).includes('SIGTERM received'));

  // The same container again, on the same volume: the session and the account survive.
  const restarted = await podman(['start', name], { timeoutMs: 60_000 });
  record('the container starts again', restarted.code === 0, restarted.stderr);
  const readyAgain = await waitFor200(port, '/health/ready', name);
  expectEqual('readiness answers 200 after the restart', readyAgain.status, 200);
  const afterRestart = await http(port, 'POST', '/api/auth/refresh', {
    refreshToken: refreshed.json?.refreshToken,
  });
  expectEqual('the last refresh token still refreshes after the restart', afterRestart.status, 200);
  record(
    'and rotates again',
    isAuthResponse(afterRestart.json) &&
      afterRestart.json.refreshToken !== refreshed.json?.refreshToken,
  );
  const loginAgain = await http(port, 'POST', '/api/auth/login', {
    email: user.email,
    password: user.password,
  });
  expectEqual('the user still logs in after the restart', loginAgain.status, 200);
  expectEqual('the user keeps its id', loginAgain.json?.user?.id, registered.json?.user?.id);
  const wrong = await http(port, 'POST', '/api/auth/login', {
    email: user.email,
    password: 'Wrong!pass1',
  });
  expectEqual('a wrong password still answers 401', wrong.status, 401);
}

async function psql(url, sql, options = {}) {
  return run('psql', [url, '-v', 'ON_ERROR_STOP=1', '-qAt', '-c', sql], {
    timeoutMs: 30_000,
    ...options,
  });
}

function withDatabase(url, name) {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/** Resolves YAML merge keys (`<<: *anchor`), which compose honours and js-yaml 5 leaves as keys. */
function withMerges(value) {
  if (Array.isArray(value)) {
    return value.map(withMerges);
  }
  if (value === null || typeof value !== 'object') {
    return value;
  }
  const { '<<': merged, ...own } = value;
  const bases = merged === undefined ? [] : Array.isArray(merged) ? merged : [merged];
  const result = Object.assign({}, ...bases.map(withMerges));
  for (const [key, item] of Object.entries(own)) {
    result[key] = withMerges(item);
  }
  return result;
}

async function checkPostgresPair() {
  // compose.yaml is what users run; its migration command and gating are the ones tested here.
  const require = createRequire(join(ROOT, 'package.json'));
  const compose = withMerges(
    require('js-yaml').load(readFileSync(join(ROOT, 'compose.yaml'), 'utf8')),
  );
  const services = compose.services ?? {};
  const migrateCommand = services.migrate?.command;
  record(
    'compose.yaml has a one-shot migrate service with a command',
    Array.isArray(migrateCommand),
    JSON.stringify(services.migrate),
  );
  const instances = Object.entries(services).filter(([, service]) => service.depends_on?.migrate);
  expectEqual('compose.yaml runs two Keygate instances', instances.length, 2);
  for (const [instance, service] of instances) {
    expectEqual(
      `compose.yaml: ${instance} waits for the migration to complete`,
      service.depends_on.migrate.condition,
      'service_completed_successfully',
    );
  }
  expectEqual(
    'compose.yaml: the migration waits for a healthy PostgreSQL',
    services.migrate?.depends_on?.postgres?.condition,
    'service_healthy',
  );
  if (!Array.isArray(migrateCommand)) {
    return;
  }

  database = `keygate_test_container_${RUN_ID.replace(/-/g, '_')}`;
  const created = await psql(PG_ADMIN_URL, `CREATE DATABASE ${database}`);
  if (!record(`a database of its own (${database})`, created.code === 0, created.stderr)) {
    database = null;
    return;
  }
  const url = withDatabase(PG_ADMIN_URL, database);

  // The one-shot migration, as compose runs it: the image, compose's command, then gone.
  const migrate = await podman(
    [
      'run',
      '--rm',
      '--name',
      `keygate-test-${RUN_ID}-migrate`,
      ...SANDBOX,
      ...READ_ONLY,
      '-e',
      `ConnectionStrings__DefaultConnection=${url}`,
      IMAGE,
      ...migrateCommand,
    ],
    { timeoutMs: 120_000 },
  );
  expectEqual('the one-shot migration exits 0', migrate.code, 0);
  if (migrate.code !== 0) {
    say(`    ${tail(migrate.stdout + migrate.stderr)}`);
  }
  const applied = await psql(url, 'SELECT count(*) FROM migrations');
  record(
    'the migrations table lists the applied migrations',
    Number(applied.stdout.trim()) > 0,
    applied.stdout + applied.stderr,
  );
  const again = await podman(
    [
      'run',
      '--rm',
      ...SANDBOX,
      ...READ_ONLY,
      '-e',
      `ConnectionStrings__DefaultConnection=${url}`,
      IMAGE,
      ...migrateCommand,
    ],
    { timeoutMs: 120_000 },
  );
  record(
    'a second migration run finds nothing to do',
    again.code === 0 && /No migrations are pending/i.test(again.stdout + again.stderr),
    tail(again.stdout + again.stderr, 5),
  );

  const [portA, portB, managementA, managementB] = await freePorts(4);
  const pair = [
    { name: `keygate-test-${RUN_ID}-pg-1`, port: portA, managementPort: managementA },
    { name: `keygate-test-${RUN_ID}-pg-2`, port: portB, managementPort: managementB },
  ];
  for (const instance of pair) {
    const started = await startContainer(
      instance.name,
      {
        PORT: instance.port,
        Management__Port: instance.managementPort,
        ConnectionStrings__DefaultConnection: url,
      },
      READ_ONLY,
    );
    record(
      `${instance.name.split('-').slice(-2).join('-')} starts`,
      started.code === 0,
      started.stderr,
    );
  }
  for (const instance of pair) {
    const ready = await waitFor200(instance.port, '/health/ready', instance.name);
    expectEqual(
      `readiness answers 200 on instance ${instance.name.at(-1)} (port ${instance.port})`,
      ready.status,
      200,
    );
    if (ready.status !== 200) {
      say(`    ${tail(await logsOf(instance.name))}`);
    }
  }
  const user = uniqueUser('p');
  const registered = await http(portA, 'POST', '/api/auth/register', user);
  expectEqual('register on instance 1 answers 201', registered.status, 201);
  const refreshedOnB = await http(portB, 'POST', '/api/auth/refresh', {
    refreshToken: registered.json?.refreshToken,
  });
  expectEqual("instance 2 refreshes instance 1's refresh token", refreshedOnB.status, 200);
  const refreshedOnA = await http(portA, 'POST', '/api/auth/refresh', {
    refreshToken: refreshedOnB.json?.refreshToken,
  });
  expectEqual("instance 1 refreshes instance 2's rotated token", refreshedOnA.status, 200);
  const me = await http(portB, 'GET', '/api/auth/me', undefined, {
    authorization: `Bearer ${refreshedOnA.json?.accessToken}`,
  });
  expectEqual("instance 2 accepts instance 1's access token", me.status, 200);
  const reused = await http(portB, 'POST', '/api/auth/refresh', {
    refreshToken: registered.json?.refreshToken,
  });
  expectEqual('a rotated token is refused on the other instance (401)', reused.status, 401);
  const login = await http(portB, 'POST', '/api/auth/login', {
    email: user.email,
    password: user.password,
  });
  expectEqual('login on instance 2 answers 200', login.status, 200);
  for (const instance of pair) {
    const stopped = await podman(['stop', '--time', '10', instance.name], { timeoutMs: 30_000 });
    const exit = await podman(['inspect', '--format', '{{.State.ExitCode}}', instance.name]);
    record(
      `instance ${instance.name.at(-1)} stops with exit 0`,
      stopped.code === 0 && exit.stdout.trim() === '0',
      exit.stdout + stopped.stderr,
    );
  }
}

async function cleanUp() {
  const options = { timeoutMs: 60_000, cleanUp: true };
  for (const name of containers) {
    await podman(['rm', '--force', '--volumes', '--time', '2', name], options);
  }
  for (const volume of volumes) {
    await podman(['volume', 'rm', '--force', volume], options);
  }
  if (database) {
    await psql(PG_ADMIN_URL, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`, options);
  }
  const left = await podman(
    ['ps', '-a', '--filter', `name=keygate-test-${RUN_ID}`, '--format', '{{.Names}}'],
    options,
  );
  const leftVolumes = [];
  for (const volume of volumes) {
    if ((await podman(['volume', 'exists', volume], options)).code === 0) {
      leftVolumes.push(volume);
    }
  }
  record(
    `no container nor volume of this run is left (${containers.size} containers, ${volumes.size} volumes)`,
    left.stdout.trim() === '' && leftVolumes.length === 0,
    left.stdout + leftVolumes.join(' '),
  );
  if (database) {
    const gone = await psql(
      PG_ADMIN_URL,
      `SELECT count(*) FROM pg_database WHERE datname = '${database}'`,
      options,
    );
    expectEqual('the test database is dropped', gone.stdout.trim(), '0');
  }
}

async function main() {
  let interrupted = false;
  const interrupt = () => {
    interrupted = true;
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  const deadline = setTimeout(() => {
    say(`not ok - the harness ran out of its ${DEADLINE_MS / 60_000} minutes`);
  }, DEADLINE_MS);
  deadline.unref();
  try {
    if (await buildImages()) {
      await checkImageConfig();
      if (!interrupted) {
        await checkRefusesWithoutSecret();
      }
      if (!interrupted) {
        await checkSqlite();
      }
      if (!interrupted) {
        await checkPostgresPair();
      }
    }
  } catch (error) {
    record(
      'the harness ran to its end',
      false,
      error instanceof Error ? error.stack : String(error),
    );
  } finally {
    await cleanUp();
  }
  const failed = results.filter((result) => !result.ok).length;
  const seconds = (value) => (value === undefined ? 'kept' : `${value.toFixed(0)} s`);
  say(
    `\nbase image build: ${seconds(figures.baseImageBuildSeconds)}; image build: ${seconds(figures.imageBuildSeconds)} (${figures.cachedSteps ?? 0} steps cached); ` +
      `image size: ${figures.imageSizeBytes ? `${(figures.imageSizeBytes / 1e6).toFixed(0)} MB` : 'unknown'}; ` +
      `stop: ${figures.stopSeconds?.toFixed(1) ?? '?'} s; whole run: ${((Date.now() - startedAt) / 1000).toFixed(0)} s`,
  );
  say(`${results.length - failed} passed, ${failed} failed${interrupted ? ' (interrupted)' : ''}`);
  process.exit(failed === 0 && !interrupted ? 0 : 1);
}

await main();
