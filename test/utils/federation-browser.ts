import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** Where the providers send people back: Federation__PublicUrl in the tests (never listened on). */
export const PUBLIC_URL = 'http://localhost:1';
export const FRONT_END = 'https://app.example.com/signed-in';

export function callbackOf(provider: string): string {
  return `${PUBLIC_URL}/api/auth/federation/${provider}/callback`;
}

/** A front end's PKCE pair for the one-time code. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface TestOidcProvider {
  readonly issuer: string;
  /** The account that signs in next, by its claims (`sub` at least). */
  nextLogin(claims: Record<string, unknown>): Promise<void>;
  /** The next person refuses at the provider. */
  denyNext(): Promise<void>;
  close(): Promise<void>;
}

/**
 * oidc-provider 9 needs Node >= 22: the runtime of the tests when it is one (CI's Node 26),
 * otherwise the Node 26 unpacked beside it on development machines.
 */
const PROVIDER_NODE =
  Number(process.versions.node.split('.')[0]) >= 22
    ? process.execPath
    : '/opt/node26/package/bin/node';

const PROVIDER_SCRIPT = fileURLToPath(
  new URL('../federation/oidc-test-provider.mjs', import.meta.url),
);

/** How a test provider misbehaves on purpose (see test/federation/oidc-test-provider.mjs). */
export type ProviderLie =
  | 'expired'
  | 'wrong-signature'
  | 'wrong-audience'
  | 'wrong-nonce'
  | 'wrong-issuer'
  | 'unsigned'
  | 'down'
  | 'slow';

/** Starts panva's oidc-provider in a child process (see test/federation/oidc-test-provider.mjs). */
export async function startOidcProvider(settings: {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly redirectUris: readonly string[];
  readonly lie?: ProviderLie;
  /** How long the `slow` provider's token endpoint waits before answering (30 s by default). */
  readonly delaySeconds?: number;
  /** The provider's own sign-in and consent pages, for a browser to fill in. */
  readonly interactive?: true;
}): Promise<TestOidcProvider> {
  const child: ChildProcess = spawn(PROVIDER_NODE, [PROVIDER_SCRIPT, JSON.stringify(settings)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the test provider exited (${code})`)));
  });
  const { issuer } = JSON.parse(line) as { issuer: string };
  const control = async (body: unknown) => {
    const response = await fetch(`${issuer}/__next-login`, {
      method: 'POST',
      body: JSON.stringify(body),
    });
    if (response.status !== 204) {
      throw new Error(`the test provider answered ${response.status}`);
    }
  };
  return {
    issuer,
    nextLogin: (claims) => control(claims),
    denyNext: () => control({ deny: true }),
    close: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill();
      }),
  };
}

/**
 * A browser with a cookie jar: follows redirects from `start` (the provider's authorization URL)
 * until one points at `stopAt` (Keygate's callback), and returns that URL without opening it.
 */
export async function browseUntil(start: string, stopAt: string): Promise<URL> {
  const jar = new Map<string, string>();
  let url = new URL(start);
  for (let hop = 0; hop < 20; hop++) {
    if (url.href.startsWith(stopAt)) {
      return url;
    }
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(url, {
      redirect: 'manual',
      headers: cookie === '' ? {} : { cookie },
    });
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(';');
      const index = pair.indexOf('=');
      jar.set(pair.slice(0, index), pair.slice(index + 1));
    }
    const location = response.headers.get('location');
    if (location === null) {
      throw new Error(
        `${url.href} answered ${response.status} without a redirect: ${await response.text()}`,
      );
    }
    url = new URL(location, url);
  }
  throw new Error('too many redirects');
}
