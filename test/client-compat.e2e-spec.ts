import { execFileSync } from 'node:child_process';
import {
  createKeygateClient,
  KeygateError,
  type KeygateClient,
  type SessionState,
} from '../packages/client/dist/keygate-client.js';
import { useSharedTestApp, type TestApp } from './utils/create-test-app.js';
import { FakeClock } from './utils/fake-clock.js';
import { tokenOf, useSmtpSink } from './utils/smtp-sink.js';

// @keygate/client (its build, `npm run client:build`) in Node against the service with what
// already exists turned on: the second factor, the opt-in active-session check, and verified
// addresses. Each client is a device of its own (storage 'memory').

const PASSWORD = 'S3cure!pass';
const T0 = new Date('2026-01-01T00:00:00.000Z');
const MFA_KEY = Buffer.alloc(32, 0xc3).toString('base64');

/** What an authenticator app shows at `at` for `secret` (Debian's oathtool, as test/two-factor does). */
function oathtool(secret: string, at: Date): string {
  const seconds = Math.floor(at.getTime() / 1000);
  return execFileSync('oathtool', ['--totp', '-b', '-N', `@${seconds}`, secret], {
    encoding: 'utf8',
  }).trim();
}

/** A device: a client of its own, and what its listeners were told. */
function device(t: TestApp): { client: KeygateClient; states: (string | null)[] } {
  const client = createKeygateClient({ baseUrl: t.baseUrl });
  const states: (string | null)[] = [];
  client.onChange((state: SessionState) => states.push(state === null ? null : state.user.email));
  return { client, states };
}

/** The error a call threw, as `{ status, message }`. */
function refusal(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => 'resolved',
    (error: unknown) =>
      error instanceof KeygateError ? { status: error.status, message: error.message } : error,
  );
}

describe('@keygate/client with the second factor', () => {
  const t = useSharedTestApp(() => ({
    clock: new FakeClock(T0),
    environment: { Mfa__EncryptionKeys: MFA_KEY },
  }));

  it('should turn the factor on, keep its session, and log in with the code once asked for it', async () => {
    const email = `mfa-${Date.now()}@example.com`;
    const first = device(t);
    await first.client.register({ username: 'mfa', email, password: PASSWORD });

    const { secret } = await first.client.enrollTotp({ password: PASSWORD });
    const { recoveryCodes } = await first.client.confirmTotp({
      code: oathtool(secret, t.clock.now()),
    });
    const stillIn = await first.client.me();
    const second = device(t);
    const asked = await second.client
      .login({ email, password: PASSWORD })
      .catch((error: unknown) => error);
    t.clock.advance(30_000);
    await second.client.login({ email, password: PASSWORD, code: oathtool(secret, t.clock.now()) });

    expect(recoveryCodes).toHaveLength(10);
    expect(stillIn.email).toBe(email);
    expect(asked).toBeInstanceOf(KeygateError);
    expect(asked).toMatchObject({
      status: 401,
      message: 'Se requiere el código de verificación.',
      codeRequired: true,
    });
    expect((await second.client.me()).email).toBe(email);
    expect((await second.client.refresh()).user.email).toBe(email);
    expect(second.states).toEqual([email, email]);
  });
});

describe('@keygate/client with Jwt__RequireActiveSession=true', () => {
  const t = useSharedTestApp({ environment: { Jwt__RequireActiveSession: 'true' } });

  it('should keep serving through rotations, and sign out a device whose session another ended', async () => {
    const email = `active-${Date.now()}@example.com`;
    const kept = device(t);
    await kept.client.register({ username: 'active', email, password: PASSWORD });
    const ended = device(t);
    await ended.client.login({ email, password: PASSWORD });

    await kept.client.refresh();
    await kept.client.revokeAllSessions({ keepCurrent: true });
    const afterEnd = await refusal(ended.client.me());

    expect((await kept.client.me()).email).toBe(email);
    // The guard refused the token, the client refreshed once, the refresh was refused: signed out.
    expect(afterEnd).toEqual({ status: 401, message: 'Unauthorized' });
    expect(ended.states).toEqual([email, null]);
    expect(await ended.client.getAccessToken()).toBeNull();
    expect(kept.states).toEqual([email, email]);
  });
});

describe('@keygate/client with Auth__RequireVerifiedEmail=true', () => {
  const sink = useSmtpSink();
  const t = useSharedTestApp(() => ({
    environment: {
      Smtp__Url: sink.url,
      Smtp__From: 'Keygate <no-reply@keygate.test>',
      Mail__ResetPasswordUrl: 'https://app.example.com/reset-password?token={token}',
      Mail__VerifyEmailUrl: 'https://app.example.com/verify-email?token={token}',
      Auth__RequireVerifiedEmail: 'true',
    },
  }));

  it('should keep the session while the address is unverified, and refresh once it is', async () => {
    const email = `verify-${Date.now()}@example.com`;
    const { client, states } = device(t);
    await client.register({ username: 'verify', email, password: PASSWORD });
    const [mail] = await sink.waitFor(email);

    const unverified = await client.refresh().catch((error: unknown) => error);
    const verified = await client.verifyEmail({ token: tokenOf(mail.link) });
    const refreshed = await client.refresh();

    expect(unverified).toMatchObject({
      status: 401,
      message: 'Email no verificado.',
      sessionEnded: false,
    });
    expect(verified).toEqual({ message: 'Email verificado exitosamente.' });
    expect(refreshed.user.email).toBe(email);
    expect(states).toEqual([email, email]);
  });
});
