import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tls from 'node:tls';
import * as oidc from 'openid-client';
import { createUser, DEFAULT_PASSWORD } from './factories/user.factory.js';
import { createTestApp, type TestApp } from './utils/create-test-app.js';
import { providerAppOptions, TestBrowser, type BrowserAnswer } from './utils/oauth-provider.js';

// Issue 40, client ID metadata documents: an https URL is the client_id, and Keygate fetches the
// document behind it. The documents are served by a local HTTPS server whose self-signed
// certificate is made with openssl here and added to this process's default authorities (Node's
// tls.setDefaultCACertificates), the list NODE_EXTRA_CA_CERTS extends in production.

const UNVERIFIED =
  'Aplicación no verificada: se registró por sí misma y Keygate no sabe quién la publica. Permita el acceso solo si la reconoce.';
const LOCALHOST_ONLY =
  'Esta aplicación solo vuelve a este mismo equipo (localhost): permita el acceso solo si acaba de iniciarla usted.';
const REFUSED =
  'La aplicación envió una solicitud que no se puede atender; no se le devuelve a ella.';
const REDIRECT = 'http://127.0.0.1/callback';

/** Node's setDefaultCACertificates (Node 22.19+), missing from this @types/node. */
const nodeTls = tls as typeof tls & {
  setDefaultCACertificates(certificates: readonly string[]): void;
  getCACertificates(type: 'default'): string[];
};

let directory: string;
let documents: Server;
let port: number;
let originalAuthorities: string[];
/** How many times each path was asked for. */
const hits = new Map<string, number>();

/** What the document server answers at each path; `self` is the URL asked for. */
const ROUTES: Record<string, (self: string) => { status: number; headers?: object; body: string }> =
  {
    '/agent.json': (self) => ({
      status: 200,
      headers: { 'cache-control': 'max-age=600' },
      body: JSON.stringify({
        client_id: self,
        client_name: 'Agente documentado',
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      }),
    }),
    '/other-id.json': () => ({
      status: 200,
      body: JSON.stringify({
        client_id: 'https://elsewhere.example.com/agent.json',
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'none',
      }),
    }),
    '/moved.json': () => ({
      status: 302,
      headers: { location: '/agent.json' },
      body: '',
    }),
    '/large.json': (self) => ({
      status: 200,
      body: JSON.stringify({
        client_id: self,
        client_name: 'x'.repeat(6 * 1024),
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'none',
      }),
    }),
    '/plain-http.json': (self) => ({
      status: 200,
      body: JSON.stringify({
        client_id: self,
        redirect_uris: ['http://agent.example.com/callback'],
        token_endpoint_auth_method: 'none',
      }),
    }),
  };

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'keygate-cimd-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout',
      join(directory, 'key.pem'),
      '-out',
      join(directory, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  const cert = readFileSync(join(directory, 'cert.pem'), 'utf8');
  originalAuthorities = nodeTls.getCACertificates('default');
  nodeTls.setDefaultCACertificates([...originalAuthorities, cert]);
  documents = createServer(
    { key: readFileSync(join(directory, 'key.pem')), cert },
    (request, response) => {
      const path = new URL(request.url ?? '/', 'https://localhost').pathname;
      hits.set(path, (hits.get(path) ?? 0) + 1);
      const route = ROUTES[path];
      if (route === undefined) {
        response.writeHead(404).end();
        return;
      }
      const answer = route(`https://${request.headers.host ?? ''}${path}`);
      response
        .writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers })
        .end(answer.body);
    },
  );
  await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
  port = (documents.address() as AddressInfo).port;
});

afterAll(async () => {
  nodeTls.setDefaultCACertificates(originalAuthorities);
  await new Promise<void>((resolve) => documents.close(() => resolve()));
  rmSync(directory, { recursive: true, force: true });
});

/** The authorization request of the client `clientId`, as the person's browser opens it. */
async function authorization(t: TestApp, clientId: string, redirect = REDIRECT) {
  const config = await oidc.discovery(new URL(t.baseUrl), clientId, undefined, oidc.None(), {
    execute: [oidc.allowInsecureRequests],
  });
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirect,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    scope: 'openid',
    state,
  });
  return { config, verifier, state, url };
}

function expectRefused(answer: BrowserAnswer, code: string): void {
  expect(answer.status).toBe(400);
  expect(answer.text).toContain(`<p role="alert">${REFUSED}</p>`);
  expect(answer.text).toContain(`<p>Código del error: <code>${code}</code></p>`);
}

describe('OAuth server: client metadata documents (private fetch allowed, for this test)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(
      await providerAppOptions('ES256', {
        OAuthServer__ClientIdMetadataDocuments: 'true',
        OAuthServer__AllowPrivateFetch: 'true',
      }),
    );
  });
  afterAll(async () => {
    await t.close();
  });

  it('should say so in discovery', async () => {
    expect((await t.get('/.well-known/oauth-authorization-server')).json()).toMatchObject({
      client_id_metadata_document_supported: true,
    });
  });

  it('should sign a person in for the client a document describes, marked unverified and local, its redirect URIs the only ones', async () => {
    const clientId = `https://localhost:${port}/agent.json`;
    const user = await createUser(t, { email: 'documento@example.com' });
    const flow = await authorization(t, clientId, 'http://127.0.0.1:49152/callback');
    const browser = new TestBrowser();
    const signIn = await browser.follow(flow.url, 'http://127.0.0.1:49152/');
    expect(signIn.status).toBe(200);
    const consent = await browser.submit(
      signIn,
      { email: user.email, password: DEFAULT_PASSWORD },
      'http://127.0.0.1:49152/',
    );
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('La aplicación <strong>Agente documentado</strong>');
    expect(consent.text).toContain(UNVERIFIED);
    expect(consent.text).toContain(LOCALHOST_ONLY);
    const back = await browser.submit(consent, { decision: 'approve' }, 'http://127.0.0.1:49152/');
    const tokens = await oidc.authorizationCodeGrant(flow.config, back.url, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
    });
    expect(tokens.access_token).toEqual(expect.any(String));
    // Cached as its Cache-Control says: one fetch for the whole flow.
    expect(hits.get('/agent.json')).toBe(1);

    const elsewhere = await authorization(t, clientId, 'https://evil.example.com/callback');
    expectRefused(await new TestBrowser().open(elsewhere.url), 'invalid_redirect_uri');
  });

  it.each([
    ['whose client_id is not its URL', '/other-id.json', 'invalid_client_metadata'],
    ['that redirects (not followed)', '/moved.json', 'invalid_client'],
    ['larger than 5 KiB', '/large.json', 'invalid_client'],
    ['whose redirect URI is plain http away from loopback', '/plain-http.json', 'invalid_client'],
  ])('should refuse a document %s', async (_case, path, code) => {
    const followed = hits.get('/agent.json') ?? 0;
    const flow = await authorization(t, `https://localhost:${port}${path}`);
    expectRefused(await new TestBrowser().open(flow.url), code);
    // It was fetched, and nothing it points to was.
    expect(hits.get(path) ?? 0).toBeGreaterThan(0);
    expect(hits.get('/agent.json') ?? 0).toBe(followed);
  });
});

describe('OAuth server: client metadata documents on private addresses (the default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(
      await providerAppOptions('ES256', { OAuthServer__ClientIdMetadataDocuments: 'true' }),
    );
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    ['a name that resolves to loopback', 'localhost'],
    ['a loopback address', '127.0.0.1'],
  ])('should refuse %s without connecting', async (_case, host) => {
    const before = hits.get('/agent.json') ?? 0;
    const flow = await authorization(t, `https://${host}:${port}/agent.json`);
    expectRefused(await new TestBrowser().open(flow.url), 'invalid_client');
    expect(hits.get('/agent.json') ?? 0).toBe(before);
  });
});
