import { TEST_HASH_ITERATIONS, TEST_SECRET_KEY } from './create-test-app.js';
import { httpRequest, type TestResponse } from './http.js';
import { REGISTER } from './routes.js';
import type { SmtpSink } from './smtp-sink.js';
import type { ServerProcess } from './spawn-server.js';
import type { TestDatabase } from './test-database.js';

// For suites that run the mail sender as real processes (startServer) against a smtp sink.

/**
 * An instance on `database` that mails through `sink`, polling the outbox every second and giving
 * each attempt a second (so a claim lasts two: a dead sender's mail is taken over within seconds).
 */
export function mailingServerEnvironment(
  database: TestDatabase,
  sink: SmtpSink,
): Record<string, string> {
  return {
    Jwt__SecretKey: TEST_SECRET_KEY,
    PasswordHashing__Iterations: String(TEST_HASH_ITERATIONS),
    ConnectionStrings__DefaultConnection: database.connectionString,
    TokenCleanup__Enabled: 'false',
    Smtp__Url: sink.url,
    Smtp__From: 'Keygate <no-reply@keygate.test>',
    Mail__ResetPasswordUrl: 'https://app.example.com/reset-password?token={token}',
    Mail__VerifyEmailUrl: 'https://app.example.com/verify-email?token={token}',
    Mail__SendTimeoutSeconds: '1',
    Mail__PollIntervalSeconds: '1',
  };
}

/** POSTs `body` as JSON to `server`. */
export function postJson(
  server: ServerProcess,
  path: string,
  body: unknown,
): Promise<TestResponse> {
  return httpRequest(server.baseUrl, path, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
}

/** Registers an account on `server` (which mails it a verification link); throws unless 201. */
export async function registerOn(
  server: ServerProcess,
  account: { readonly username: string; readonly email: string; readonly password: string },
): Promise<void> {
  const response = await postJson(server, REGISTER, account);
  if (response.status !== 201) {
    throw new Error(`register: expected 201, got ${response.status} ${response.text}`);
  }
}
