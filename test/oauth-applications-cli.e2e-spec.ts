import { readFileSync } from 'node:fs';
import { verifyAccessToken } from '../packages/resource/src/index.js';
import { createUser, DEFAULT_PASSWORD } from './factories/user.factory.js';
import {
  cliClient,
  finishDeviceSignIn,
  serviceToken,
  startDeviceSignIn,
} from './oauth-applications/cli-and-service.js';
import { createTestApp, type TestApp } from './utils/create-test-app.js';
import { providerAppOptions, registerClient, TestBrowser } from './utils/oauth-provider.js';
import { codeShownFor } from './utils/page-code.js';

// docs/oauth-applications.md: the openid-client code it shows for a command-line tool (device
// grant) and a service (client credentials), run against a real Keygate.

const PAGE = 'docs/oauth-applications.md';
const FILE = 'cli-and-service.ts';
const API = 'https://reports.example.com';
const NOWHERE = 'https://nowhere.invalid/';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp(
    await providerAppOptions('ES256', {
      OAuthServer__DeviceFlow: 'true',
      OAuthServer__ClientCredentials: 'true',
      OAuthServer__Resources: JSON.stringify([
        { uri: API, name: 'Reports', scopes: ['reports:read'] },
      ]),
    }),
  );
});
afterAll(async () => {
  await t.close();
});

describe(PAGE, () => {
  it('should show the file the test runs', () => {
    const file = readFileSync(new URL(`oauth-applications/${FILE}`, import.meta.url), 'utf8');
    expect(codeShownFor(PAGE, FILE)).toBe(file);
  });

  it('should sign a command-line tool in with the code the page shows', async () => {
    const user = await createUser(t, { email: 'cli@example.com' });
    const client = await registerClient(t, {
      name: 'Deploy CLI',
      redirectUris: [],
      isPublic: true,
      grantTypes: ['device_code'],
    });
    const config = await cliClient(t.baseUrl, client.clientId);
    const { device, message } = await startDeviceSignIn(config);
    expect(message).toBe(`Abra ${t.baseUrl}/oauth/device y escriba el código ${device.user_code}`);

    const browser = new TestBrowser();
    const codePage = await browser.open(device.verification_uri);
    const confirm = await browser.submit(codePage, { user_code: device.user_code }, NOWHERE);
    const signIn = await browser.submit(confirm, { confirm: 'yes' }, NOWHERE);
    const consent = await browser.submit(
      signIn,
      { email: user.email, password: DEFAULT_PASSWORD },
      NOWHERE,
    );
    const done = await browser.submit(consent, { decision: 'approve' }, NOWHERE);
    expect(done.status).toBe(200);

    // The person decided before the tool's first poll: it need not wait its interval here.
    const tokens = await finishDeviceSignIn(config, { ...device, interval: 0 });
    expect(tokens.claims()).toMatchObject({ sub: user.id, azp: client.clientId });
    expect(tokens.refresh_token).toEqual(expect.any(String));
  });

  it('should get a service a token for the API with the code the page shows', async () => {
    const client = await registerClient(t, {
      name: 'Nightly report',
      redirectUris: [],
      grantTypes: ['client_credentials'],
    });
    const tokens = await serviceToken(
      t.baseUrl,
      client.clientId,
      client.clientSecret ?? '',
      API,
      'reports:read',
    );
    expect(
      await verifyAccessToken(tokens.access_token, {
        issuer: t.baseUrl,
        resource: API,
        requiredScopes: ['reports:read'],
      }),
    ).toMatchObject({ aud: API, client_id: client.clientId, scope: 'reports:read' });
  });
});
