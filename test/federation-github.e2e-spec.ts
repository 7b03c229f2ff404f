import Fastify, { type FastifyInstance } from 'fastify';
import { createHash } from 'node:crypto';
import { useSharedTestApp } from './utils/create-test-app.js';
import { authResponse } from './utils/expected-bodies.js';
import { callbackOf, FRONT_END, pkcePair, PUBLIC_URL } from './utils/federation-browser.js';

// Sign-in through a GitHub-shaped provider (issue 38): a tiny Fastify server on loopback with
// GitHub's four routes, checking PKCE and the client secret as GitHub does.

interface Person {
  readonly id: number;
  readonly login: string;
  readonly emails: ReadonlyArray<{ email: string; primary: boolean; verified: boolean }>;
}

function startGithub(): Promise<{
  server: FastifyInstance;
  url: string;
  next: (p: Person) => void;
}> {
  const server = Fastify();
  const codes = new Map<string, { challenge: string; person: Person }>();
  const tokens = new Map<string, Person>();
  let next: Person | null = null;
  server.get('/login/oauth/authorize', (request, reply) => {
    const query = request.query as Record<string, string>;
    const code = `code-${codes.size + 1}`;
    codes.set(code, { challenge: query.code_challenge, person: next! });
    const back = new URL(query.redirect_uri);
    back.searchParams.set('code', code);
    back.searchParams.set('state', query.state);
    return reply.redirect(back.toString());
  });
  server.post('/login/oauth/access_token', (request) => {
    const body = Object.fromEntries(new URLSearchParams(request.body as string));
    const issued = codes.get(body.code);
    codes.delete(body.code);
    const challenge = createHash('sha256')
      .update(body.code_verifier ?? '')
      .digest('base64url');
    if (
      issued === undefined ||
      body.client_secret !== 'gh-secret' ||
      challenge !== issued.challenge
    ) {
      return { error: 'bad_verification_code' };
    }
    const token = `token-${tokens.size + 1}`;
    tokens.set(token, issued.person);
    return { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' };
  });
  server.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_r, body, done) => done(null, body),
  );
  const person = (authorization: string | undefined) =>
    tokens.get((authorization ?? '').replace('Bearer ', ''));
  server.get('/user', (request) => {
    const p = person(request.headers.authorization);
    return p === undefined ? {} : { id: p.id, login: p.login };
  });
  server.get('/user/emails', (request) => person(request.headers.authorization)?.emails ?? []);
  return server.listen({ port: 0, host: '127.0.0.1' }).then((url) => ({
    server,
    url,
    next: (p: Person) => {
      next = p;
    },
  }));
}

describe('sign-in through a GitHub-shaped provider', () => {
  let github: Awaited<ReturnType<typeof startGithub>>;
  beforeAll(async () => {
    github = await startGithub();
  });
  afterAll(async () => {
    await github.server.close();
  });
  const t = useSharedTestApp(() => ({
    environment: {
      Federation__Providers: JSON.stringify([
        {
          id: 'gh',
          name: 'GitHub',
          type: 'github',
          clientId: 'gh-client',
          clientSecret: 'gh-secret',
          authorizationUrl: `${github.url}/login/oauth/authorize`,
          tokenUrl: `${github.url}/login/oauth/access_token`,
          apiUrl: github.url,
        },
      ]),
      Federation__PublicUrl: PUBLIC_URL,
      Federation__RedirectUrls: FRONT_END,
      Federation__AllowInsecureIssuers: 'true',
    },
  }));

  async function signIn(person: Person) {
    github.next(person);
    const pkce = pkcePair();
    const started = await t.request(
      `/api/auth/federation/gh/authorize?redirectTo=${encodeURIComponent(FRONT_END)}&codeChallenge=${pkce.challenge}`,
      { redirect: 'manual' },
    );
    expect(started.status).toBe(302);
    const atGithub = await fetch(started.headers.get('location') ?? '', { redirect: 'manual' });
    const callback = new URL(atGithub.headers.get('location') ?? '');
    expect(callback.href.startsWith(callbackOf('gh'))).toBe(true);
    const back = await t.request(`${callback.pathname}${callback.search}`, { redirect: 'manual' });
    return { pkce, back: new URL(back.headers.get('location') ?? '') };
  }

  it('should sign up a verified primary address, and open the same account when it returns', async () => {
    const octo = {
      id: 4242,
      login: 'octo',
      emails: [{ email: 'octo@example.com', primary: true, verified: true }],
    };
    const first = await signIn(octo);
    const response = await t.post('/api/auth/federation/token', {
      code: first.back.searchParams.get('code'),
      codeVerifier: first.pkce.verifier,
    });
    expect(response.json()).toEqual(
      authResponse({ username: expect.stringMatching(/^octo-/), email: 'octo@example.com' }),
    );
    const again = await signIn({
      ...octo,
      emails: [{ email: 'new@example.com', primary: true, verified: true }],
    });
    const second = await t.post('/api/auth/federation/token', {
      code: again.back.searchParams.get('code'),
      codeVerifier: again.pkce.verifier,
    });
    expect(second.json<{ user: { id: string } }>().user.id).toBe(
      response.json<{ user: { id: string } }>().user.id,
    );
  });

  it('should not vouch for a primary address GitHub has not verified', async () => {
    const { back } = await signIn({
      id: 7,
      login: 'lier',
      emails: [{ email: 'lier@example.com', primary: true, verified: false }],
    });
    expect(back.searchParams.get('error')).toBe('email_not_verified');
  });
});
