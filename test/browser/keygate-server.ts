import { join } from 'node:path';
import { TEST_HASH_ITERATIONS, TEST_SECRET_KEY } from '../utils/create-test-app.js';
import { startServer, type ServerProcess } from '../utils/spawn-server.js';

/**
 * The built service (dist/main.js, production mode) for the browser proofs: a database file in
 * `directory`, the fast test hashing, CORS for `allowedOrigins` (comma-separated), and `env`.
 */
export function startBrowserKeygate(
  directory: string,
  allowedOrigins: string,
  env: Readonly<Record<string, string>> = {},
): Promise<ServerProcess> {
  return startServer({
    cwd: directory,
    env: {
      NODE_ENV: 'production',
      Jwt__SecretKey: TEST_SECRET_KEY,
      PasswordHashing__Iterations: String(TEST_HASH_ITERATIONS),
      ConnectionStrings__DefaultConnection: join(directory, 'keygate.db'),
      Cors__AllowedOrigins: allowedOrigins,
      ...env,
    },
  });
}
