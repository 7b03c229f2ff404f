import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import * as oidc from 'openid-client';
import { AdminKeysService } from '../src/admin/keys/admin-keys.service.js';
import { RandomSource } from '../src/common/random/random-source.js';
import { internalOrigin } from '../src/common/request-origin/request-origin.js';
import { cliOrigin } from '../src/admin/cli/cli-origin.js';
import { KeygateMetrics } from '../src/metrics/keygate-metrics.js';
import { WebhookSender } from '../src/webhooks/webhook-sender.js';
import { WebhooksService } from '../src/webhooks/webhooks.service.js';
import { OAuthServerMessages } from '../src/oauth-server/oauth-server.messages.js';
import { OAuthClientsService } from '../src/oauth-server/oauth-clients.service.js';
import { OAuthArtefactRepository } from '../src/oauth-server/storage/oauth-artefact.repository.js';
import { UsersMessages } from '../src/users/users.messages.js';
import { registerUser, type RegisteredUser } from './factories/user.factory.js';
import { auditRows } from './utils/audit-rows.js';
import {
  createTestApp,
  useTestApp,
  type TestApp,
  type TestResponse,
} from './utils/create-test-app.js';
import { errorBody, UNAUTHORIZED_BODY } from './utils/expected-bodies.js';
import {
  providerAppOptions,
  registerClient,
  TestBrowser,
  type BrowserAnswer,
} from './utils/oauth-provider.js';
import { FakeClock } from './utils/fake-clock.js';
import { Exposition } from './utils/prometheus-text.js';
import { asymmetricSigning } from './utils/signing-keys.js';
import { WebhookReceiver } from './utils/webhook-receiver.js';

// Issue 39: consent remembered per client and scopes, listed and withdrawn by the person (which
// ends the grant's tokens), listed by the admin API; the provider's audit events and metrics.
// openid-client 6 against the real listener on loopback, as test/oauth-provider-flow does.

const GRANTS = '/api/auth/oauth/grants';
const REDIRECT = 'https://app.example.com/callback';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const GRANT_NOT_FOUND = errorBody(404, 'No ha autorizado a esa aplicación.');

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp(await providerAppOptions('ES256'));
});
afterAll(async () => {
  await t.close();
});

interface Flow {
  readonly config: oidc.Configuration;
  readonly verifier: string;
  readonly state: string;
  readonly url: URL;
}

async function confidentialClient(name = 'Grafana') {
  const added = await registerClient(t, { name, redirectUris: [REDIRECT] });
  const config = await oidc.discovery(
    new URL(t.baseUrl),
    added.clientId,
    undefined,
    oidc.ClientSecretBasic(added.clientSecret ?? ''),
    { execute: [oidc.allowInsecureRequests] },
  );
  return { clientId: added.clientId, config };
}

async function startFlow(
  config: oidc.Configuration,
  scope: string,
  extra: Record<string, string> = {},
): Promise<Flow> {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    // OpenID Connect Core §11: offline_access is granted only with prompt=consent.
    ...(scope.includes('offline_access') ? { prompt: 'consent' } : {}),
    ...extra,
  });
  return { config, verifier, state, url };
}

/** Signs in on the hosted page; the page or redirect that follows (consent, or the client). */
async function signIn(browser: TestBrowser, flow: Flow, user: RegisteredUser) {
  const page = await browser.follow(flow.url, REDIRECT);
  expect(page.status).toBe(200);
  return browser.submit(page, { email: user.email, password: user.password }, REDIRECT);
}

function isConsentPage(answer: BrowserAnswer): boolean {
  return answer.status === 200 && answer.text.includes('name="decision" value="approve"');
}

/** Signs in and approves in a new browser; the tokens the client gets. */
async function consentAndRedeem(flow: Flow, user: RegisteredUser, browser = new TestBrowser()) {
  const consent = await signIn(browser, flow, user);
  expect(isConsentPage(consent)).toBe(true);
  const back = await browser.submit(consent, { decision: 'approve' }, REDIRECT);
  return redeem(flow, back.url);
}

function redeem(flow: Flow, callback: URL) {
  return oidc.authorizationCodeGrant(flow.config, callback, {
    pkceCodeVerifier: flow.verifier,
    expectedState: flow.state,
  });
}

function listGrants(token: string): Promise<TestResponse> {
  return t.request(GRANTS, { headers: { authorization: `Bearer ${token}` } });
}

function withdraw(token: string, clientId: string): Promise<TestResponse> {
  return t.request(`${GRANTS}/${encodeURIComponent(clientId)}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${token}` },
  });
}

/** /oauth/userinfo with the access token: its status. */
async function userInfoStatus(accessToken: string): Promise<number> {
  const response = await fetch(`${t.baseUrl}/oauth/userinfo`, {
    headers: { authorization: `Bearer ${accessToken}` },
  });
  await response.arrayBuffer();
  return response.status;
}

/** The kinds of the provider's stored artefacts that name the client, sorted. */
async function storedArtefactsOf(clientId: string): Promise<string[]> {
  const rows = await t.database.query<{ kind: string; payload: string }>(
    'SELECT "kind", "payload" FROM "oauth_artefacts"',
  );
  return rows
    .filter((row) => (JSON.parse(row.payload) as { clientId?: unknown }).clientId === clientId)
    .map((row) => row.kind)
    .sort();
}

async function metrics(): Promise<Exposition> {
  return new Exposition(await t.app.get(KeygateMetrics).registry.metrics());
}

describe('OAuth grants: consent is remembered per client and scopes', () => {
  it('should list the grant after consent, skip consent in another browser session, and ask again for new scopes and for prompt=consent', async () => {
    const user = await registerUser(t);
    const { clientId, config } = await confidentialClient('<i>Grafana</i>');
    await consentAndRedeem(await startFlow(config, 'openid email offline_access'), user);

    const listed = await listGrants(user.accessToken);
    expect(listed.status).toBe(200);
    expect(listed.json()).toEqual({
      grants: [
        {
          clientId,
          clientName: '<i>Grafana</i>',
          scopes: ['openid', 'email', 'offline_access'],
          grantedAt: expect.stringMatching(ISO),
        },
      ],
    });

    // Another browser (a new sign-in): the same scopes go straight back to the client.
    const again = await startFlow(config, 'openid email');
    const skipped = await signIn(new TestBrowser(), again, user);
    expect(skipped.url.href.startsWith(REDIRECT)).toBe(true);
    expect(skipped.url.searchParams.get('code')).toEqual(expect.any(String));
    await expect(redeem(again, skipped.url)).resolves.toMatchObject({
      access_token: expect.any(String),
    });

    // A scope the grant does not cover: the consent page asks for that one only.
    const browser = new TestBrowser();
    const more = await signIn(browser, await startFlow(config, 'openid email profile'), user);
    expect(isConsentPage(more)).toBe(true);
    expect(more.text).toContain(OAuthServerMessages.scopeProfile);
    expect(more.text).not.toContain(OAuthServerMessages.scopeEmail);
    await browser.submit(more, { decision: 'approve' }, REDIRECT);
    expect((await listGrants(user.accessToken)).json()).toMatchObject({
      grants: [{ clientId, scopes: ['openid', 'profile', 'email', 'offline_access'] }],
    });

    // prompt=consent asks again, listing what is asked, though the grant covers it.
    const forced = await browser.follow(
      (await startFlow(config, 'openid email', { prompt: 'consent' })).url,
      REDIRECT,
    );
    expect(isConsentPage(forced)).toBe(true);
    expect(forced.text).toContain(OAuthServerMessages.scopeEmail);

    const rows = await auditRows(t.database, user.id);
    expect(
      rows.filter((row) => row.type === 'oauth_consent_granted').map((row) => row.details),
    ).toEqual([
      { clientId, scopes: ['openid', 'email', 'offline_access'] },
      { clientId, scopes: ['profile'] },
    ]);
  });
});

describe('OAuth grants: withdrawn by the person', () => {
  it('should end the grant: its refresh token refused at /oauth/token, its access token at /oauth/userinfo and by introspection', async () => {
    const user = await registerUser(t);
    const other = await confidentialClient('Other');
    const otherTokens = await consentAndRedeem(
      await startFlow(other.config, 'openid offline_access'),
      user,
    );
    const { clientId, config } = await confidentialClient();
    const flow = await startFlow(config, 'openid email offline_access');
    const browser = new TestBrowser();
    const tokens = await consentAndRedeem(flow, user, browser);
    expect(await userInfoStatus(tokens.access_token)).toBe(200);
    expect(await storedArtefactsOf(clientId)).toEqual([
      'AccessToken',
      'AuthorizationCode',
      'Grant',
      'RefreshToken',
    ]);
    const before = await metrics();

    const withdrawn = await withdraw(user.accessToken, clientId);
    expect({ status: withdrawn.status, text: withdrawn.text }).toEqual({ status: 204, text: '' });

    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token ?? '')).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    expect(await userInfoStatus(tokens.access_token)).toBe(401);
    expect(await oidc.tokenIntrospection(config, tokens.access_token)).toEqual({ active: false });
    expect(await oidc.tokenIntrospection(config, tokens.refresh_token ?? '')).toEqual({
      active: false,
    });

    // Not only refused: the grant, its codes and its tokens are gone from storage.
    expect(await storedArtefactsOf(clientId)).toEqual([]);

    // The other application's grant and tokens are untouched.
    expect(await userInfoStatus(otherTokens.access_token)).toBe(200);
    expect((await listGrants(user.accessToken)).json()).toEqual({
      grants: [
        expect.objectContaining({ clientId: other.clientId, scopes: ['openid', 'offline_access'] }),
      ],
    });

    // Withdrawn once: nothing left to withdraw. An unknown or malformed client id alike.
    for (const id of [clientId, randomUUID(), 'not-a-client']) {
      const response = await withdraw(user.accessToken, id);
      expect({ id, status: response.status, body: response.json() }).toEqual({
        id,
        status: 404,
        body: GRANT_NOT_FOUND,
      });
    }

    // The browser is still signed in: the next authorization asks for consent again.
    const asked = await browser.follow((await startFlow(config, 'openid email')).url, REDIRECT);
    expect(isConsentPage(asked)).toBe(true);

    const rows = await auditRows(t.database, user.id);
    expect(rows.filter((row) => row.type === 'oauth_consent_withdrawn')).toEqual([
      expect.objectContaining({
        userId: user.id,
        details: { clientId, scopes: ['openid', 'email', 'offline_access'] },
      }),
    ]);
    expect(
      (await metrics()).delta(before, 'keygate_oauth_consents_total', { change: 'withdrawn' }),
    ).toBe(1);
  });

  it("should not withdraw another account's consent", async () => {
    const owner = await registerUser(t);
    const stranger = await registerUser(t);
    const { clientId, config } = await confidentialClient();
    const tokens = await consentAndRedeem(await startFlow(config, 'openid'), owner);
    const response = await withdraw(stranger.accessToken, clientId);
    expect({ status: response.status, body: response.json() }).toEqual({
      status: 404,
      body: GRANT_NOT_FOUND,
    });
    expect(await userInfoStatus(tokens.access_token)).toBe(200);
  });

  it('should refuse the routes without a token and with an access token the provider issued', async () => {
    const user = await registerUser(t);
    const { clientId, config } = await confidentialClient();
    const tokens = await consentAndRedeem(await startFlow(config, 'openid email'), user);
    for (const [method, path] of [
      ['GET', GRANTS],
      ['DELETE', `${GRANTS}/${clientId}`],
    ] as const) {
      const bare = await t.request(path, { method });
      expect({ path, status: bare.status, body: bare.json() }).toEqual({
        path,
        status: 401,
        body: UNAUTHORIZED_BODY,
      });
      const thirdParty = await t.request(path, {
        method,
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      expect({ path, status: thirdParty.status, body: thirdParty.json() }).toEqual({
        path,
        status: 401,
        body: UNAUTHORIZED_BODY,
      });
    }
    expect(await userInfoStatus(tokens.access_token)).toBe(200);
  });
});

describe('OAuth grants: the admin API lists an account’s grants', () => {
  async function adminKey(scopes: readonly string[]): Promise<string> {
    const { secret } = await t.app
      .get(AdminKeysService)
      .create(
        `key-${randomUUID().slice(0, 8)}`,
        scopes,
        internalOrigin('cli', t.app.get(RandomSource)),
      );
    return secret;
  }

  function adminGet(path: string, key: string): Promise<TestResponse> {
    return t.request(path, { headers: { authorization: `Bearer ${key}` } });
  }

  it('should list them with their scopes under users:read, 404 for an unknown account, 403 without the scope', async () => {
    const user = await registerUser(t);
    const { clientId, config } = await confidentialClient('Wiki');
    await consentAndRedeem(await startFlow(config, 'openid profile'), user);
    const key = await adminKey(['users:read']);

    const listed = await adminGet(`/api/admin/users/${user.id}/oauth-grants`, key);
    expect({ status: listed.status, body: listed.json() }).toEqual({
      status: 200,
      body: {
        grants: [
          {
            clientId,
            clientName: 'Wiki',
            scopes: ['openid', 'profile'],
            grantedAt: expect.stringMatching(ISO),
          },
        ],
      },
    });

    const unknown = await adminGet(`/api/admin/users/${randomUUID()}/oauth-grants`, key);
    expect({ status: unknown.status, body: unknown.json() }).toEqual({
      status: 404,
      body: errorBody(404, UsersMessages.notFound),
    });

    const without = await adminGet(
      `/api/admin/users/${user.id}/oauth-grants`,
      await adminKey(['sessions:write']),
    );
    expect({ status: without.status, body: without.json() }).toEqual({
      status: 403,
      body: errorBody(403, 'La clave de administración no tiene el permiso necesario.'),
    });
  });
});

describe('OAuth grants: audit events and metrics of the provider', () => {
  it('should record tokens issued per grant type, refresh reuse, and clients added and removed', async () => {
    const user = await registerUser(t);
    const { clientId, config } = await confidentialClient();
    const before = await metrics();
    const tokens = await consentAndRedeem(await startFlow(config, 'openid offline_access'), user);
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token ?? '');
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token ?? '')).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    expect(await oidc.tokenIntrospection(config, refreshed.access_token)).toEqual({
      active: false,
    });

    const rows = (await auditRows(t.database, user.id)).filter((row) =>
      row.type.startsWith('oauth_'),
    );
    expect(rows.map(({ type, details }) => ({ type, details }))).toEqual([
      {
        type: 'oauth_consent_granted',
        details: { clientId, scopes: ['openid', 'offline_access'] },
      },
      {
        type: 'oauth_token_issued',
        details: { clientId, grantType: 'authorization_code', hasRefreshToken: true },
      },
      {
        type: 'oauth_token_issued',
        details: { clientId, grantType: 'refresh_token', hasRefreshToken: true },
      },
      { type: 'oauth_refresh_reuse_detected', details: { clientId } },
    ]);
    // Never a token in the trail.
    const text = JSON.stringify(rows);
    for (const secret of [tokens.access_token, tokens.refresh_token, refreshed.refresh_token]) {
      expect(text).not.toContain(secret);
    }

    const after = await metrics();
    for (const grantType of ['authorization_code', 'refresh_token']) {
      expect(
        after.delta(before, 'keygate_oauth_tokens_issued_total', {
          client_id: clientId,
          grant_type: grantType,
        }),
      ).toBe(1);
    }
    expect(after.delta(before, 'keygate_oauth_refresh_reuse_total', { client_id: clientId })).toBe(
      1,
    );
    expect(after.delta(before, 'keygate_oauth_consents_total', { change: 'granted' })).toBe(1);

    const clients = t.app.get(OAuthClientsService);
    const added = await clients.add({ name: 'Short-lived', redirectUris: [REDIRECT] });
    await clients.remove(added.clientId);
    const clientRows = (await auditRows(t.database)).filter(
      (row) => (row.details as { clientId?: unknown }).clientId === added.clientId,
    );
    expect(clientRows.map(({ type, userId, details }) => ({ type, userId, details }))).toEqual([
      { type: 'oauth_client_added', userId: null, details: { clientId: added.clientId } },
      { type: 'oauth_client_removed', userId: null, details: { clientId: added.clientId } },
    ]);
  });
});

describe('OAuth grants: a refresh token reuse the storage catches', () => {
  it('should record the reuse when the token is used at the same moment elsewhere (the race the library does not see)', async () => {
    const user = await registerUser(t);
    const { clientId, config } = await confidentialClient();
    const tokens = await consentAndRedeem(await startFlow(config, 'openid offline_access'), user);
    const before = await metrics();
    // Another instance used the token between this one's read and its use.
    const consume = jest
      .spyOn(t.app.get(OAuthArtefactRepository), 'consume')
      .mockResolvedValueOnce(false);
    try {
      await expect(
        oidc.refreshTokenGrant(config, tokens.refresh_token ?? ''),
      ).rejects.toMatchObject({ error: 'invalid_grant' });
    } finally {
      consume.mockRestore();
    }
    const rows = await auditRows(t.database, user.id);
    expect(
      rows
        .filter((row) => row.type === 'oauth_refresh_reuse_detected')
        .map(({ details }) => details),
    ).toEqual([{ clientId }]);
    expect(
      (await metrics()).delta(before, 'keygate_oauth_refresh_reuse_total', {
        client_id: clientId,
      }),
    ).toBe(1);
    expect(await storedArtefactsOf(clientId)).toEqual([]);
  });
});

describe('OAuth grants: webhooks of the provider', () => {
  let hooked: TestApp;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    const options = await providerAppOptions('ES256', {
      Webhooks__EncryptionKeys: Buffer.alloc(32, 7).toString('base64'),
      // The receiver listens on loopback.
      Webhooks__AllowPrivateDestinations: 'true',
    });
    // The receiver's library refuses timestamps 5 minutes off: the clock starts at the real now.
    hooked = await createTestApp({ ...options, clock: new FakeClock(new Date()) });
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await hooked.close();
    await receiver.stop();
  });

  it('should deliver consent granted and withdrawn and token issued to a subscription of all events', async () => {
    const added = await hooked.app
      .get(WebhooksService)
      .add({ url: receiver.url, events: 'all' }, cliOrigin(hooked.app.get(RandomSource)));
    receiver.trust(added.secret);
    const user = await registerUser(hooked);
    const client = await registerClient(hooked, { name: 'Hooked', redirectUris: [REDIRECT] });
    const config = await oidc.discovery(
      new URL(hooked.baseUrl),
      client.clientId,
      undefined,
      oidc.ClientSecretBasic(client.clientSecret ?? ''),
      { execute: [oidc.allowInsecureRequests] },
    );
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid email',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    const browser = new TestBrowser();
    const page = await browser.follow(url, REDIRECT);
    const consent = await browser.submit(
      page,
      { email: user.email, password: user.password },
      REDIRECT,
    );
    const back = await browser.submit(consent, { decision: 'approve' }, REDIRECT);
    await oidc.authorizationCodeGrant(config, back.url, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    const withdrawn = await hooked.request(`${GRANTS}/${client.clientId}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${user.accessToken}` },
    });
    expect(withdrawn.status).toBe(204);

    const sender = hooked.app.get(WebhookSender);
    await sender.idle();
    sender.wake();
    await sender.idle();
    expect(
      receiver
        .unique()
        .filter((hook) => hook.payload.type.startsWith('oauth_'))
        .map((hook) => ({ type: hook.payload.type, accountId: hook.payload.data.accountId })),
    ).toEqual([
      { type: 'oauth_client_added', accountId: null },
      { type: 'oauth_consent_granted', accountId: user.id },
      { type: 'oauth_token_issued', accountId: user.id },
      { type: 'oauth_consent_withdrawn', accountId: user.id },
    ]);
  });
});

describe('OAuth grants: the provider off', () => {
  const off = useTestApp({ environment: asymmetricSigning('ES256') });

  it("should not serve the admin API's listing of an account's grants", async () => {
    const { secret } = await off.app
      .get(AdminKeysService)
      .create('reader', ['users:read'], internalOrigin('cli', off.app.get(RandomSource)));
    const user = await registerUser(off);
    const response = await off.request(`/api/admin/users/${user.id}/oauth-grants`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    expect({ status: response.status, body: response.json() }).toEqual({
      status: 404,
      body: errorBody(404, 'Not Found'),
    });
  });
});
