import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { TEST_HASH_ITERATIONS, TEST_SECRET_KEY } from './create-test-app.js';

/** The built admin CLI; `npx nest build` must have run first. */
export const CLI_ENTRY = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const CLI_TIMEOUT_MS = 30_000;

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `node <script> ...args` with exactly `env` (plus PATH and NO_COLOR) in `cwd`; the process
 * is killed after `timeoutMs`.
 */
export function runProcess(
  script: string,
  args: readonly string[],
  cwd: string,
  env: Readonly<Record<string, string>>,
  timeoutMs = CLI_TIMEOUT_MS,
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd,
      // eslint-disable-next-line no-restricted-syntax
      env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * The built admin CLI on `database`, configured through the environment as the service is: the
 * test secret and hashing cost, then `env`.
 */
export function runCliOn(
  database: { readonly connectionString: string },
  args: readonly string[],
  cwd: string,
  env: Readonly<Record<string, string>> = {},
): Promise<CliRun> {
  return runProcess(CLI_ENTRY, args, cwd, {
    Jwt__SecretKey: TEST_SECRET_KEY,
    PasswordHashing__Iterations: String(TEST_HASH_ITERATIONS),
    ConnectionStrings__DefaultConnection: database.connectionString,
    ...env,
  });
}
