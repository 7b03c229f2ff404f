import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FastifyInstance } from 'fastify';
import { decodeJwt } from 'jose';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyAccessToken } from '../packages/resource/src/index.js';
import { createUser, DEFAULT_PASSWORD, registerUser } from './factories/user.factory.js';
import { filesMcpServer } from './resource-servers/files-mcp-server.js';
import { ordersApi } from './resource-servers/orders-api.js';
import {
  createTestApp,
  TEST_HASH_ITERATIONS,
  TEST_SECRET_KEY,
  type TestApp,
} from './utils/create-test-app.js';
import { bearerRefusal, challengeOf } from './utils/expected-bodies.js';
import { FakeClock } from './utils/fake-clock.js';
import { httpRequest } from './utils/http.js';
import {
  loopbackCertificate,
  serveDocumentsOverHttps,
  type HttpsDocumentServer,
  type LoopbackCertificate,
} from './utils/loopback-tls.js';
import {
  connectAgent,
  McpAgent,
  type AgentPerson,
  type ConnectedAgent,
} from './utils/mcp-agent.js';
import { freePort, providerAppOptions, registerClient } from './utils/oauth-provider.js';
import { ME, REGISTER } from './utils/routes.js';
import { asymmetricSigning } from './utils/signing-keys.js';
import {
  findFreePort,
  startServer,
  stopAllServers,
  type ServerProcess,
} from './utils/spawn-server.js';
import { createTestDatabase, type TestDatabase } from './utils/test-database.js';

// Issue 40, "How it is tested": an MCP client on the official SDK (@modelcontextprotocol/sdk),
// with its own auth() flow and nothing configured but the MCP server's URL, against Keygate.
// The MCP server and the API are docs/resource-servers.md's, built on the SDK's server and
// @keygate/resource; the person signs in and consents on Keygate's hosted pages (over HTTP, as
// the agent's browser). The agent's OAuthClientProvider is test/utils/mcp-agent.ts.

const WHOAMI = { name: 'whoami', arguments: {} };
const WRITE_NOTE = { name: 'write_note', arguments: { text: 'hola' } };

/** A resource server of the test on a loopback port, and its URL as Keygate declares it. */
interface Served {
  readonly resource: string;
  readonly server: FastifyInstance;
}

/** The MCP server and the API of docs/resource-servers.md, trusting the Keygate at `issuer`. */
interface ResourceServers {
  readonly issuer: string;
  readonly mcp: Served;
  readonly orders: Served;
  close(): Promise<void>;
}

/** Their ports, chosen before Keygate starts: its OAuthServer__Resources names them. */
interface ResourcePorts {
  readonly mcp: number;
  readonly orders: number;
}

async function resourcePorts(): Promise<ResourcePorts> {
  const [mcpPort, ordersPort] = await Promise.all([freePort(), freePort()]);
  return { mcp: mcpPort, orders: ordersPort };
}

const mcpResourceAt = (ports: ResourcePorts) => `http://127.0.0.1:${ports.mcp}/mcp`;
const ordersResourceAt = (ports: ResourcePorts) => `http://127.0.0.1:${ports.orders}`;

/** OAuthServer__Resources: the MCP server and the API, each with its scopes. */
function resourcesSetting(ports: ResourcePorts): string {
  return JSON.stringify([
    { uri: mcpResourceAt(ports), name: 'Archivos (MCP)', scopes: ['files:read', 'files:write'] },
    { uri: ordersResourceAt(ports), name: 'Pedidos', scopes: ['orders:read', 'orders:write'] },
  ]);
}

async function startResourceServers(
  issuer: string,
  ports: ResourcePorts,
): Promise<ResourceServers> {
  const mcp = {
    resource: mcpResourceAt(ports),
    server: filesMcpServer({ issuer, resource: mcpResourceAt(ports) }),
  };
  const orders = {
    resource: ordersResourceAt(ports),
    server: ordersApi({ issuer, resource: ordersResourceAt(ports) }),
  };
  await mcp.server.listen({ port: ports.mcp, host: '127.0.0.1' });
  await orders.server.listen({ port: ports.orders, host: '127.0.0.1' });
  return {
    issuer,
    mcp,
    orders,
    close: async () => {
      await mcp.server.close();
      await orders.server.close();
    },
  };
}

let t: TestApp;
let servers: ResourceServers;
let redirectUrl: string;

beforeAll(async () => {
  const ports = await resourcePorts();
  redirectUrl = `http://127.0.0.1:${await freePort()}/callback`;
  t = await createTestApp({
    ...(await providerAppOptions('ES256', {
      OAuthServer__Resources: resourcesSetting(ports),
      OAuthServer__DynamicRegistration: 'open',
    })),
    // The provider's tokens carry real instants: Keygate's own checks read the same time.
    clock: new FakeClock(new Date()),
  });
  servers = await startResourceServers(t.baseUrl, ports);
});

afterAll(async () => {
  await servers?.close();
  await t?.close();
});

/** A JSON-RPC call of the writing tool, as raw HTTP: what the MCP server answers, exactly. */
function callWriteNote(mcpResource: string, token: string) {
  return fetch(mcpResource, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: WRITE_NOTE }),
  });
}

/** What a client reads of a resource server's refusal. */
async function refusalOf(response: Response) {
  return challengeOf({
    status: response.status,
    headers: response.headers,
    text: await response.text(),
  });
}

/**
 * The whole story of an agent given only the MCP server's URL: connecting (discovery, its
 * client, sign-in and consent), a tool call, a refresh for the resource, and the step-up on the
 * 403 of a tool that needs another scope. Resolves to the client id the agent ended up with.
 */
async function agentStory(
  agent: McpAgent,
  personId: string,
  { issuer, mcp }: ResourceServers,
): Promise<string> {
  const connected: ConnectedAgent = await connectAgent(agent, mcp.resource);
  const { client, transport } = connected;
  const clientId = agent.clientInformation()?.client_id ?? '';

  // (1) Connected and calling a tool: the token is for this MCP server exactly.
  const whoami = await client.callTool(WHOAMI);
  expect(whoami.content).toEqual([{ type: 'text', text: `${personId} via ${clientId}` }]);
  const [first] = agent.authorizationRequests;
  expect(first.searchParams.get('resource')).toBe(mcp.resource);
  expect(first.searchParams.get('scope')).toBe('files:read offline_access');
  expect(decodeJwt(agent.accessToken).aud).toBe(mcp.resource);
  const claims = await verifyAccessToken(agent.accessToken, {
    issuer,
    resource: mcp.resource,
    requiredScopes: ['files:read'],
  });
  expect(claims).toMatchObject({
    iss: issuer,
    aud: mcp.resource,
    sub: personId,
    client_id: clientId,
    scope: 'files:read',
  });
  const code = agent.tokenRequests.at(-1);
  expect(code?.get('grant_type')).toBe('authorization_code');
  expect(code?.get('resource')).toBe(mcp.resource);

  // (2) A refresh for the resource, through the SDK's auth() with the refresh token it holds.
  const beforeRefresh = agent.accessToken;
  expect(await auth(agent, { serverUrl: mcp.resource, fetchFn: agent.fetch })).toBe('AUTHORIZED');
  const refresh = agent.tokenRequests.at(-1);
  expect(refresh?.get('grant_type')).toBe('refresh_token');
  expect(refresh?.get('resource')).toBe(mcp.resource);
  expect(agent.accessToken).not.toBe(beforeRefresh);
  expect(decodeJwt(agent.accessToken)).toMatchObject({ aud: mcp.resource, scope: 'files:read' });
  expect((await client.callTool(WHOAMI)).content).toEqual(whoami.content);

  // (3) Step-up: the writing tool's 403 insufficient_scope sends the person to consent again.
  const stepUp = await client.callTool(WRITE_NOTE).catch((error: unknown) => error);
  expect(stepUp).toBeInstanceOf(UnauthorizedError);
  const second = agent.authorizationRequests.at(-1);
  expect(agent.authorizationRequests).toHaveLength(2);
  expect(second?.searchParams.get('scope')).toBe('files:read files:write offline_access');
  expect(second?.searchParams.get('resource')).toBe(mcp.resource);
  expect(agent.consentPages.at(-1)).toContain('files:write');
  await transport.finishAuth(agent.takeCode());
  const written = await client.callTool(WRITE_NOTE);
  expect(written.content).toEqual([{ type: 'text', text: 'Saved: hola' }]);
  expect(decodeJwt(agent.accessToken)).toMatchObject({
    aud: mcp.resource,
    scope: 'files:read files:write',
  });
  // The new grant's refresh token carries the wider scope.
  expect(await auth(agent, { serverUrl: mcp.resource, fetchFn: agent.fetch })).toBe('AUTHORIZED');
  expect(agent.tokenRequests.at(-1)?.get('grant_type')).toBe('refresh_token');
  expect(decodeJwt(agent.accessToken)).toMatchObject({
    aud: mcp.resource,
    scope: 'files:read files:write',
  });
  expect((await client.callTool(WRITE_NOTE)).content).toEqual(written.content);
  await client.close();
  return clientId;
}

/** The person at the agent's side, as Keygate's pages know them. */
function personOf(email: string): AgentPerson {
  return { email, password: DEFAULT_PASSWORD };
}

describe('An MCP agent on the official SDK, given only the MCP server URL', () => {
  it('(a) should register dynamically, sign in and consent, call a tool, refresh for the resource and step up', async () => {
    const person = await createUser(t, { email: 'ana@example.com' });
    const agent = new McpAgent({ redirectUrl, person: personOf(person.email) });

    const clientId = await agentStory(agent, person.id, servers);

    // The SDK registered (RFC 7591) what its provider described, and kept Keygate's answer.
    expect(agent.clientInformation()).toMatchObject({
      client_id: clientId,
      redirect_uris: [redirectUrl],
    });
    expect(clientId).not.toBe('');
  });

  it('should also work with a client an operator registered, given to the SDK as its client information', async () => {
    const person = await createUser(t, { email: 'olga@example.com' });
    const added = await registerClient(t, {
      name: 'Agente',
      redirectUris: [redirectUrl],
      isPublic: true,
    });
    const agent = new McpAgent({
      redirectUrl,
      person: personOf(person.email),
      clientId: added.clientId,
    });

    expect(await agentStory(agent, person.id, servers)).toBe(added.clientId);
  });
});

describe('Tokens where they do not belong', () => {
  let agent: McpAgent;

  beforeAll(async () => {
    const person = await createUser(t, { email: 'berta@example.com' });
    const added = await registerClient(t, {
      name: 'Agente',
      redirectUris: [redirectUrl],
      isPublic: true,
    });
    agent = new McpAgent({ redirectUrl, person: personOf(person.email), clientId: added.clientId });
    await (await connectAgent(agent, servers.mcp.resource)).client.close();
  });

  it("should refuse the MCP server's token at another resource (401 invalid_token)", async () => {
    const accepted = await callWriteNote(servers.mcp.resource, agent.accessToken);
    const elsewhere = await fetch(`${servers.orders.resource}/orders`, {
      headers: { authorization: `Bearer ${agent.accessToken}` },
    });

    // The MCP server knows the token (a 403 for the scope it lacks); the API refuses it.
    expect(accepted.status).toBe(403);
    expect(await refusalOf(elsewhere)).toEqual({
      status: 401,
      body: '',
      challenge: `Bearer error="invalid_token", resource_metadata="${servers.orders.resource}/.well-known/oauth-protected-resource"`,
    });
  });

  it('should refuse a Keygate session token at the MCP server (401 invalid_token)', async () => {
    const person = await registerUser(t);

    const response = await callWriteNote(servers.mcp.resource, person.accessToken);

    expect(await refusalOf(response)).toEqual({
      status: 401,
      body: '',
      challenge: `Bearer error="invalid_token", resource_metadata="${servers.mcp.resource.replace('/mcp', '/.well-known/oauth-protected-resource/mcp')}"`,
    });
  });

  it("should refuse the agent's token at /api/auth/me, as an invalid token", async () => {
    // Keygate's clock at the token's time: refused for what the token is, not for when.
    t.clock.set(new Date());
    const response = await t.get(ME, agent.accessToken);

    expect(challengeOf(response)).toEqual(bearerRefusal('Bearer error="invalid_token"'));
  });
});

describe('An MCP agent with a client ID metadata document served over HTTPS', () => {
  const DOCUMENT_PATH = '/agents/keygate-test/client.json';
  let certificate: LoopbackCertificate;
  let documents: HttpsDocumentServer;
  let database: TestDatabase;
  let cwd: string;
  let keygate: ServerProcess;
  let stack: ResourceServers;

  beforeAll(async () => {
    certificate = await loopbackCertificate();
    documents = await serveDocumentsOverHttps(certificate);
    database = await createTestDatabase();
    cwd = mkdtempSync(join(tmpdir(), 'keygate-mcp-agent-'));
    const ports = await resourcePorts();
    const port = await findFreePort();
    // A process of its own: Node reads NODE_EXTRA_CA_CERTS when it starts, and Keygate trusts
    // the certificate authorities Node does, so the document's self-signed certificate is added
    // as an operator adds a private CA.
    keygate = await startServer({
      cwd,
      port,
      env: {
        Jwt__SecretKey: TEST_SECRET_KEY,
        PasswordHashing__Iterations: String(TEST_HASH_ITERATIONS),
        ConnectionStrings__DefaultConnection: database.connectionString,
        TokenCleanup__Enabled: 'false',
        NODE_EXTRA_CA_CERTS: certificate.certificatePath,
        ...asymmetricSigning('ES256', {
          OAuthServer__Enabled: 'true',
          OAuthServer__Issuer: `http://127.0.0.1:${port}`,
          OAuthServer__Resources: resourcesSetting(ports),
          OAuthServer__ClientIdMetadataDocuments: 'true',
          // The document is on loopback, which the outbound guard refuses otherwise.
          OAuthServer__AllowPrivateFetch: 'true',
        }),
      },
    });
    stack = await startResourceServers(keygate.baseUrl, ports);
  });

  afterAll(async () => {
    await stack?.close();
    await stopAllServers();
    await documents?.close();
    certificate?.remove();
    rmSync(cwd, { recursive: true, force: true });
    await database?.drop();
  });

  /** A person signed up through the API of the Keygate process. */
  async function signUp(email: string): Promise<{ id: string }> {
    const response = await httpRequest(keygate.baseUrl, REGISTER, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'carla', email, password: DEFAULT_PASSWORD }),
    });
    expect(response.status).toBe(201);
    return response.json<{ user: { id: string } }>().user;
  }

  // The document's URL is longer than 36 characters, as deployed agents' are: PostgreSQL once
  // refused to store the consent to it (oauth_consents.clientId was sized for a UUID).
  it('(b) should present its document as client_id, sign in and consent, call a tool, refresh for the resource and step up', async () => {
    const person = await signUp('carla@example.com');
    const clientMetadataUrl = `${documents.origin}${DOCUMENT_PATH}`;
    const agent = new McpAgent({
      redirectUrl,
      person: personOf('carla@example.com'),
      clientMetadataUrl,
    });
    documents.documents.set(DOCUMENT_PATH, {
      body: { client_id: clientMetadataUrl, ...agent.clientMetadata },
    });

    const clientId = await agentStory(agent, person.id, stack);

    expect(clientId).toBe(clientMetadataUrl);
    expect(documents.requested).toContain(DOCUMENT_PATH);
  });
});
