import { FederatedIdentity } from '../src/federation/entities/federated-identity.entity.js';
import { User } from '../src/users/entities/user.entity.js';
import { createTestApp, type TestApp } from './utils/create-test-app.js';
import { errorBody } from './utils/expected-bodies.js';
import {
  browseUntil,
  callbackOf,
  FRONT_END,
  pkcePair,
  PUBLIC_URL,
  startOidcProvider,
  type TestOidcProvider,
} from './utils/federation-browser.js';

// Sign-in through other providers (issue 38) under concurrency, on SQLite and (npm run test:pg)
// PostgreSQL: two instances of the service on one database, so only what the database enforces
// (the flow taken by one delete, the unique e-mail, the unique (issuer, subject) pair) can make
// the outcome right, not anything one process serialises.

const TOKEN = '/api/auth/federation/token';
const INVALID_FLOW = 'El inicio de sesión con el proveedor no es válido o ya se usó.';

describe('sign-in through a provider on two instances at once', () => {
  let provider: TestOidcProvider;
  let first: TestApp;
  let second: TestApp;

  beforeAll(async () => {
    provider = await startOidcProvider({
      clientId: 'keygate',
      clientSecret: 'secret-of-honest',
      redirectUris: [callbackOf('honest')],
    });
    const environment = {
      Federation__Providers: JSON.stringify([
        {
          id: 'honest',
          name: 'Proveedor honest',
          type: 'oidc',
          issuer: provider.issuer,
          clientId: 'keygate',
          clientSecret: 'secret-of-honest',
        },
      ]),
      Federation__PublicUrl: PUBLIC_URL,
      Federation__RedirectUrls: FRONT_END,
      Federation__AllowInsecureIssuers: 'true',
    };
    first = await createTestApp({ environment });
    second = await createTestApp({ environment, database: first.database });
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
    await provider?.close();
  });

  /** A flow started on `app` and followed at the provider, as `claims`, up to Keygate's callback. */
  async function toCallback(app: TestApp, claims: Record<string, unknown>, challenge: string) {
    await provider.nextLogin(claims);
    const started = await app.request(
      `/api/auth/federation/honest/authorize?redirectTo=${encodeURIComponent(FRONT_END)}&codeChallenge=${challenge}`,
      { redirect: 'manual' },
    );
    expect(started.status).toBe(302);
    const callback = await browseUntil(started.headers.get('location') ?? '', callbackOf('honest'));
    return `${callback.pathname}${callback.search}`;
  }

  it('should let exactly one of four callbacks of one flow, split between the instances, go on', async () => {
    const { challenge } = pkcePair();
    const callback = await toCallback(
      first,
      { sub: 'race-flow', email: 'race-flow@example.com', email_verified: true },
      challenge,
    );

    const responses = await Promise.all(
      [first, second, first, second].map((app) => app.request(callback, { redirect: 'manual' })),
    );

    const through = responses.filter((response) => response.status === 302);
    expect(through).toHaveLength(1);
    expect(new URL(through[0].headers.get('location') ?? '').searchParams.get('code')).toEqual(
      expect.any(String),
    );
    for (const refused of responses.filter((response) => response.status !== 302)) {
      expect({ status: refused.status, body: refused.json() }).toEqual({
        status: 400,
        body: errorBody(400, INVALID_FLOW),
      });
      expect(refused.headers.get('location')).toBeNull();
    }
  });

  it.each([1, 2, 3])(
    'should give two first sign-ins of one new identity on the two instances one account and one identity (round %i)',
    async (round) => {
      const claims = {
        sub: `race-new-${round}`,
        email: `race-new-${round}@example.com`,
        email_verified: true,
      };
      const [pkceA, pkceB] = [pkcePair(), pkcePair()];
      const callbackA = await toCallback(first, claims, pkceA.challenge);
      const callbackB = await toCallback(second, claims, pkceB.challenge);

      const [backA, backB] = await Promise.all([
        first.request(callbackA, { redirect: 'manual' }),
        second.request(callbackB, { redirect: 'manual' }),
      ]);

      const codeOf = (response: { headers: Headers }) =>
        new URL(response.headers.get('location') ?? '').searchParams.get('code');
      expect([backA.status, backB.status]).toEqual([302, 302]);
      const [sessionA, sessionB] = await Promise.all([
        first.post(TOKEN, { code: codeOf(backA), codeVerifier: pkceA.verifier }),
        second.post(TOKEN, { code: codeOf(backB), codeVerifier: pkceB.verifier }),
      ]);
      expect([sessionA.status, sessionB.status]).toEqual([200, 200]);
      const users = await first.dataSource.getRepository(User).findBy({ email: claims.email });
      expect(users).toHaveLength(1);
      expect(sessionA.json<{ user: { id: string } }>().user.id).toBe(users[0].id);
      expect(sessionB.json<{ user: { id: string } }>().user.id).toBe(users[0].id);
      const identities = await first.dataSource
        .getRepository(FederatedIdentity)
        .findBy({ subject: claims.sub });
      expect(identities.map((identity) => identity.userId)).toEqual([users[0].id]);
    },
  );
});
