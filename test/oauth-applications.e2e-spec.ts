import { readFileSync } from 'node:fs';
import { createUser } from './factories/user.factory.js';
import { finishSignIn, keygate, startSignIn } from './oauth-applications/sign-in-with-keygate.js';
import { createTestApp, type TestApp } from './utils/create-test-app.js';
import { providerAppOptions, registerClient, TestBrowser } from './utils/oauth-provider.js';
import { codeShownFor } from './utils/page-code.js';

// docs/oauth-applications.md: the openid-client code it shows, run against a real Keygate.

const PAGE = 'docs/oauth-applications.md';
const FILE = 'sign-in-with-keygate.ts';
const REDIRECT = 'https://app.example.com/auth/callback';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp(await providerAppOptions());
});
afterAll(async () => {
  await t.close();
});

describe(PAGE, () => {
  it('should show the file the test runs', () => {
    const file = readFileSync(new URL(`oauth-applications/${FILE}`, import.meta.url), 'utf8');
    expect(codeShownFor(PAGE, FILE)).toBe(file);
  });

  it('should sign a person in with the code the page shows', async () => {
    const user = await createUser(t, { username: 'berta', email: 'berta@example.com' });
    const client = await registerClient(t, { name: 'Intranet', redirectUris: [REDIRECT] });
    const config = await keygate(t.baseUrl, client.clientId, client.clientSecret ?? '');

    const { url, pending } = await startSignIn(config, REDIRECT);
    const browser = new TestBrowser();
    const signIn = await browser.follow(url, REDIRECT);
    const consent = await browser.submit(
      signIn,
      { email: user.email, password: 'S3cure!pass' },
      REDIRECT,
    );
    const back = await browser.submit(consent, { decision: 'approve' }, REDIRECT);

    const { tokens, profile } = await finishSignIn(config, back.url, pending);
    expect(tokens.claims()).toMatchObject({ sub: user.id, iss: t.baseUrl, amr: ['pwd'] });
    expect(tokens.refresh_token).toEqual(expect.any(String));
    expect(profile).toEqual({
      sub: user.id,
      email: 'berta@example.com',
      email_verified: false,
      preferred_username: 'berta',
      name: 'berta',
    });
  });
});
