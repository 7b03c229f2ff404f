import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { SignJWT } from 'jose';
import { readFileSync } from 'node:fs';
import {
  LoopbackIssuer,
  signingKey,
  type SigningKey,
} from '../packages/resource/test/loopback-issuer.js';
import { filesMcpServer } from './resource-servers/files-mcp-server.js';
import { ordersApi } from './resource-servers/orders-api.js';
import { codeShownFor } from './utils/page-code.js';
import { findFreePort } from './utils/spawn-server.js';

// docs/resource-servers.md: an API and an MCP server that accept the access tokens Keygate issues
// for them, with @keygate/resource. Their files here are the page's code (which imports the
// published name, '@keygate/resource'), run against tokens minted by jose and a key set served
// on loopback, and, for the MCP server, driven by the official MCP SDK's client.

const FILES = ['orders-api.ts', 'files-mcp-server.ts'];
const ORDERS = 'https://orders.example.com';
const ORDERS_METADATA = 'https://orders.example.com/.well-known/oauth-protected-resource';

/** The file as the page shows it: importing the package by its name. */
function asPublished(file: string): string {
  return readFileSync(new URL(`./resource-servers/${file}`, import.meta.url), 'utf8').replace(
    "'../../packages/resource/src/index.js'",
    "'@keygate/resource'",
  );
}

describe('Resource servers with @keygate/resource', () => {
  let issuer: LoopbackIssuer;
  let key: SigningKey;

  beforeAll(async () => {
    issuer = await LoopbackIssuer.start();
    key = await signingKey('resource-servers');
    issuer.published = [key];
  });

  afterAll(() => issuer.close());

  it.each(FILES)('should be the code docs/resource-servers.md shows for %s', (file) => {
    expect(codeShownFor('docs/resource-servers.md', `resource-servers/${file}`)).toBe(
      asPublished(file),
    );
  });

  describe('a Fastify API', () => {
    let api: FastifyInstance;
    let origin: string;

    beforeAll(async () => {
      const port = await findFreePort();
      origin = `http://127.0.0.1:${port}`;
      api = ordersApi({ issuer: issuer.issuer, resource: ORDERS });
      await api.listen({ port, host: '127.0.0.1' });
    });

    afterAll(() => api.close());

    const call = (method: 'GET' | 'POST', path: string, token?: string) =>
      fetch(`${origin}${path}`, {
        method,
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      });
    const get = (token?: string) => call('GET', '/orders', token);

    it('should serve its protected resource metadata', async () => {
      const response = await call('GET', '/.well-known/oauth-protected-resource');

      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        resource: ORDERS,
        authorization_servers: [issuer.issuer],
        scopes_supported: ['orders:read', 'orders:write'],
        bearer_methods_supported: ['header'],
      });
    });

    it('should answer a token for it with the scope the route needs', async () => {
      const token = await issuer.mint(key, { sub: 'user-1', aud: ORDERS, scope: 'orders:read' });

      const response = await get(token);

      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ customer: 'user-1', orders: [] });
    });

    it('should ask a request without a token to get one, naming the metadata and the scope', async () => {
      const response = await get();

      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe(
        `Bearer scope="orders:read", resource_metadata="${ORDERS_METADATA}"`,
      );
      expect(await response.text()).toBe('');
    });

    it.each([
      [
        'a token for another resource',
        () => issuer.mint(key, { aud: 'https://files.example.com/mcp', scope: 'orders:read' }),
      ],
      [
        'an expired token',
        () =>
          issuer.mint(key, {
            aud: ORDERS,
            scope: 'orders:read',
            exp: Math.floor(Date.now() / 1000) - 60,
          }),
      ],
      [
        "a Keygate session token (HS256, Keygate's own audience)",
        () =>
          new SignJWT({ sub: 'user-1', iss: 'keygate', aud: 'keygate-clients' })
            .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
            .setExpirationTime('15m')
            .sign(new TextEncoder().encode('a-secret-of-keygate-0123456789-abcdefghijklmnop')),
      ],
      ['a token that is not a JWT', () => Promise.resolve('opaque-token')],
    ])('should refuse %s with 401 invalid_token', async (_label, mint) => {
      const response = await get(await mint());

      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe(
        `Bearer error="invalid_token", resource_metadata="${ORDERS_METADATA}"`,
      );
    });

    it('should answer 403 insufficient_scope, naming the scope, to a token that cannot write', async () => {
      const token = await issuer.mint(key, { sub: 'user-1', aud: ORDERS, scope: 'orders:read' });

      const refused = await call('POST', '/orders', token);
      const writer = await issuer.mint(key, {
        sub: 'user-1',
        aud: ORDERS,
        scope: 'orders:read orders:write',
      });
      const created = await call('POST', '/orders', writer);

      expect(refused.status).toBe(403);
      expect(refused.headers.get('www-authenticate')).toBe(
        `Bearer error="insufficient_scope", scope="orders:write", resource_metadata="${ORDERS_METADATA}"`,
      );
      expect(created.status).toBe(201);
      expect(await created.json()).toEqual({ customer: 'user-1', created: true });
    });

    it('should answer 503, not 401, when Keygate cannot be reached', async () => {
      const gone = await LoopbackIssuer.start();
      await gone.close();
      const port = await findFreePort();
      const stranded = ordersApi({ issuer: gone.issuer, resource: ORDERS });
      await stranded.listen({ port, host: '127.0.0.1' });
      const token = await gone.mint(key, { aud: ORDERS, scope: 'orders:read' });

      const response = await fetch(`http://127.0.0.1:${port}/orders`, {
        headers: { authorization: `Bearer ${token}` },
      });
      await stranded.close();

      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('30');
      expect(response.headers.get('www-authenticate')).toBeNull();
    });
  });

  describe('an MCP server on the official SDK, called by its client', () => {
    let server: FastifyInstance;
    let resource: string;

    beforeAll(async () => {
      const port = await findFreePort();
      resource = `http://127.0.0.1:${port}/mcp`;
      server = filesMcpServer({ issuer: issuer.issuer, resource });
      await server.listen({ port, host: '127.0.0.1' });
    });

    afterAll(() => server.close());

    const connect = async (token: string): Promise<Client> => {
      const client = new Client({ name: 'keygate-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(resource), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      return client;
    };
    const callWriteNote = (token?: string) =>
      fetch(resource, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'write_note', arguments: { text: 'hola' } },
        }),
      });

    it('should be found by the SDK: the challenge of a 401 and the metadata it points to', async () => {
      const response = await callWriteNote();
      const challenge = extractWWWAuthenticateParams(response);
      const metadata = await discoverOAuthProtectedResourceMetadata(resource);

      expect(response.status).toBe(401);
      expect(challenge).toEqual({
        resourceMetadataUrl: new URL(
          resource.replace('/mcp', '/.well-known/oauth-protected-resource/mcp'),
        ),
        scope: 'files:read files:write',
        error: undefined,
      });
      expect(metadata).toEqual({
        resource,
        authorization_servers: [issuer.issuer],
        scopes_supported: ['files:read', 'files:write'],
        bearer_methods_supported: ['header'],
      });
    });

    it('should answer GET (no stream to resume) with 405, as a stateless server does', async () => {
      const response = await fetch(resource, { headers: { accept: 'text/event-stream' } });

      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    });

    it('should let the SDK client call a tool with a token for it, the caller in authInfo', async () => {
      const token = await issuer.mint(key, {
        sub: 'user-1',
        aud: resource,
        scope: 'files:read',
        client_id: 'agent-1',
      });
      const client = await connect(token);

      const result = await client.callTool({ name: 'whoami', arguments: {} });
      await client.close();

      expect(result.content).toEqual([{ type: 'text', text: 'user-1 via agent-1' }]);
    });

    it('should answer 403 insufficient_scope to a tool call the token has no scope for', async () => {
      const reader = await issuer.mint(key, { sub: 'user-1', aud: resource, scope: 'files:read' });
      const writer = await issuer.mint(key, {
        sub: 'user-1',
        aud: resource,
        scope: 'files:read files:write',
        client_id: 'agent-1',
      });

      const refused = await callWriteNote(reader);
      const client = await connect(reader);
      const sdkRefusal = await client
        .callTool({ name: 'write_note', arguments: { text: 'hola' } })
        .catch((error: unknown) => error);
      await client.close();
      const allowed = await connect(writer);
      const written = await allowed.callTool({ name: 'write_note', arguments: { text: 'hola' } });
      await allowed.close();

      expect(refused.status).toBe(403);
      expect(extractWWWAuthenticateParams(refused)).toEqual(
        expect.objectContaining({ error: 'insufficient_scope', scope: 'files:read files:write' }),
      );
      expect(sdkRefusal).toBeInstanceOf(Error);
      expect(written.content).toEqual([{ type: 'text', text: 'Saved: hola' }]);
    });

    it('should refuse a token for another resource, before the SDK sees the request', async () => {
      const token = await issuer.mint(key, { sub: 'user-1', aud: ORDERS, scope: 'files:read' });

      const response = await callWriteNote(token);
      const connecting = await connect(token).catch((error: unknown) => error);

      expect(response.status).toBe(401);
      expect(extractWWWAuthenticateParams(response)).toEqual(
        expect.objectContaining({ error: 'invalid_token' }),
      );
      expect(connecting).toBeInstanceOf(Error);
    });
  });
});
