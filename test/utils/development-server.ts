import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_HASH_ITERATIONS, TEST_SECRET_KEY } from './create-test-app.js';
import { startServer, type ServerProcess } from './spawn-server.js';

export interface DevelopmentServer {
  readonly server: ServerProcess;
  /** Stops the process and removes its directory and database. */
  stop(): Promise<void>;
}

/**
 * The built service (dist/main.js) in development mode, with the Swagger UI at `/`, on a fresh
 * SQLite file in a temporary working directory. A real process, because SwaggerModule's UI cannot
 * be served inside Jest (see the Swagger tests in config.e2e-spec.ts). `environment` adds keys.
 */
export async function startDevelopmentServer(
  environment: Readonly<Record<string, string>> = {},
): Promise<DevelopmentServer> {
  const cwd = mkdtempSync(join(tmpdir(), 'keygate-dev-'));
  try {
    const server = await startServer({
      cwd,
      env: {
        NODE_ENV: 'development',
        Jwt__SecretKey: TEST_SECRET_KEY,
        PasswordHashing__Iterations: String(TEST_HASH_ITERATIONS),
        ConnectionStrings__DefaultConnection: join(cwd, 'keygate.db'),
        ...environment,
      },
    });
    return {
      server,
      stop: async () => {
        await server.stop();
        rmSync(cwd, { recursive: true, force: true });
      },
    };
  } catch (error: unknown) {
    rmSync(cwd, { recursive: true, force: true });
    throw error;
  }
}
