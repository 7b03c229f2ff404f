import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FastifyInstance } from 'fastify';
import { decodeJwt } from 'jose';
import { verifyAccessToken } from '../packages/resource/src/index.js';
import { createUser, DEFAULT_PASSWORD, registerUser } from './factories/user.factory.js';
import { filesMcpServer } from './resource-servers/files-mcp-server.js';
import { ordersApi } from './resource-servers/orders-api.js';
import { createTestApp, type TestApp } from './utils/create-test-app.js';
import { bearerRefusal, challengeOf } from './utils/expected-bodies.js';
import { FakeClock } from './utils/fake-clock.js';
import { connectAgent, McpAgent, type ConnectedAgent } from './utils/mcp-agent.js';
import { freePort, providerAppOptions, registerClient } from './utils/oauth-provider.js';
import { ME } from './utils/routes.js';

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

let t: TestApp;
let mcp: Served;
let orders: Served;
let redirectUrl: string;

beforeAll(async () => {
  const [mcpPort, ordersPort, agentPort] = await Promise.all([freePort(), freePort(), freePort()]);
  const mcpResource = `http://127.0.0.1:${mcpPort}/mcp`;
  const ordersResource = `http://127.0.0.1:${ordersPort}`;
  redirectUrl = `http://127.0.0.1:${agentPort}/callback`;
  t = await createTestApp({
    ...(await providerAppOptions('ES256', {
      OAuthServer__Resources: JSON.stringify([
        { uri: mcpResource, name: 'Archivos (MCP)', scopes: ['files:read', 'files:write'] },
        { uri: ordersResource, name: 'Pedidos', scopes: ['orders:read', 'orders:write'] },
      ]),
    })),
    // The provider's tokens carry real instants: Keygate's own checks read the same time.
    clock: new FakeClock(new Date()),
  });
  mcp = {
    resource: mcpResource,
    server: filesMcpServer({ issuer: t.baseUrl, resource: mcpResource }),
  };
  orders = {
    resource: ordersResource,
    server: ordersApi({ issuer: t.baseUrl, resource: ordersResource }),
  };
  await mcp.server.listen({ port: mcpPort, host: '127.0.0.1' });
  await orders.server.listen({ port: ordersPort, host: '127.0.0.1' });
});

afterAll(async () => {
  await mcp?.server.close();
  await orders?.server.close();
  await t?.close();
});

/** The claims of the agent's token, its signature checked through Keygate's published keys. */
function verifiedClaims(token: string, requiredScopes: string[] = []) {
  return verifyAccessToken(token, { issuer: t.baseUrl, resource: mcp.resource, requiredScopes });
}

/** A JSON-RPC call of the writing tool, as raw HTTP: what the MCP server answers, exactly. */
function callWriteNote(token: string) {
  return fetch(mcp.resource, {
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
 * 403 of a tool that needs another scope.
 */
async function agentStory(agent: McpAgent, personId: string) {
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
  expect(await verifiedClaims(agent.accessToken, ['files:read'])).toMatchObject({
    iss: t.baseUrl,
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
  await client.close();
  return { clientId };
}

describe('An MCP agent on the official SDK, against Keygate', () => {
  it('should connect with an operator-registered client, call a tool, refresh for the resource and step up', async () => {
    const person = await createUser(t, { email: 'ana@example.com' });
    const added = await registerClient(t, {
      name: 'Agente',
      redirectUris: [redirectUrl],
      isPublic: true,
    });
    const agent = new McpAgent({
      redirectUrl,
      person: { email: person.email, password: DEFAULT_PASSWORD },
      clientId: added.clientId,
    });

    const { clientId } = await agentStory(agent, person.id);

    expect(clientId).toBe(added.clientId);
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
    agent = new McpAgent({
      redirectUrl,
      person: { email: person.email, password: DEFAULT_PASSWORD },
      clientId: added.clientId,
    });
    await (await connectAgent(agent, mcp.resource)).client.close();
  });

  it("should refuse the MCP server's token at another resource (401 invalid_token)", async () => {
    const accepted = await callWriteNote(agent.accessToken);
    const elsewhere = await fetch(`${orders.resource}/orders`, {
      headers: { authorization: `Bearer ${agent.accessToken}` },
    });

    // The MCP server knows the token (a 403 for the scope it lacks); the API refuses it.
    expect(accepted.status).toBe(403);
    expect(await refusalOf(elsewhere)).toEqual({
      status: 401,
      body: '',
      challenge: `Bearer error="invalid_token", resource_metadata="${orders.resource}/.well-known/oauth-protected-resource"`,
    });
  });

  it('should refuse a Keygate session token at the MCP server (401 invalid_token)', async () => {
    const person = await registerUser(t);

    const response = await callWriteNote(person.accessToken);

    expect(await refusalOf(response)).toEqual({
      status: 401,
      body: '',
      challenge: `Bearer error="invalid_token", resource_metadata="${mcp.resource.replace('/mcp', '/.well-known/oauth-protected-resource/mcp')}"`,
    });
  });

  it("should refuse the agent's token at /api/auth/me, as an invalid token", async () => {
    const response = await t.get(ME, agent.accessToken);

    expect(challengeOf(response)).toEqual(bearerRefusal('Bearer error="invalid_token"'));
  });
});
