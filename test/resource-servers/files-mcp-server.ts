import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import {
  AccessTokenError,
  challenge,
  IssuerUnavailableError,
  protectedResourceMetadata,
  protectedResourceMetadataUrl,
  verifyAccessToken,
} from '../../packages/resource/src/index.js';

export interface FilesMcpSettings {
  /** Keygate, exactly as its tokens' `iss`: `https://id.example.com`. */
  readonly issuer: string;
  /** The MCP endpoint's URL, as clients are given it: `https://files.example.com/mcp`. */
  readonly resource: string;
}

/** The MCP server: one tool to read, one to write (which needs `files:write` too). */
function filesServer(): McpServer {
  const server = new McpServer({ name: 'files', version: '1.0.0' });
  server.registerTool('whoami', { description: 'Who the token was issued for.' }, (extra) => ({
    content: [
      {
        type: 'text',
        text: `${String(extra.authInfo?.extra?.sub)} via ${extra.authInfo?.clientId}`,
      },
    ],
  }));
  server.registerTool(
    'write_note',
    { description: 'Writes a note.', inputSchema: { text: z.string() } },
    ({ text }) => ({ content: [{ type: 'text', text: `Saved: ${text}` }] }),
  );
  return server;
}

/** The scopes a JSON-RPC message needs: every call `files:read`, the writing tool `files:write`. */
function scopesFor(body: unknown): string[] {
  const message = body as { method?: unknown; params?: { name?: unknown } } | null;
  const writes = message?.method === 'tools/call' && message.params?.name === 'write_note';
  return writes ? ['files:read', 'files:write'] : ['files:read'];
}

export function filesMcpServer({ issuer, resource }: FilesMcpSettings): FastifyInstance {
  const app = Fastify();
  const resourceMetadataUrl = protectedResourceMetadataUrl(resource);

  /** The caller, for the SDK's `extra.authInfo`; undefined when a 401, 403 or 503 was sent. */
  async function authorize(
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<AuthInfo | undefined> {
    const requiredScopes = scopesFor(request.body);
    const token = /^Bearer +([A-Za-z0-9._~+/-]+=*)$/i.exec(
      request.headers.authorization ?? '',
    )?.[1];
    if (token === undefined) {
      const value = challenge({ resourceMetadataUrl, scope: requiredScopes });
      return void reply.code(401).header('WWW-Authenticate', value).send();
    }
    try {
      const claims = await verifyAccessToken(token, { issuer, resource, requiredScopes });
      return {
        token,
        clientId: String(claims.client_id),
        scopes: (claims.scope ?? '').split(' '),
        expiresAt: claims.exp,
        resource: new URL(resource),
        extra: { sub: claims.sub },
      };
    } catch (error) {
      if (error instanceof IssuerUnavailableError) {
        request.log.error(error, 'Keygate unreachable: cannot verify tokens');
        return void reply.code(503).header('Retry-After', '30').send();
      }
      if (!(error instanceof AccessTokenError)) {
        throw error;
      }
      const value = challenge({
        resourceMetadataUrl,
        error: error.code,
        scope: error.code === 'insufficient_scope' ? error.requiredScopes : undefined,
      });
      return void reply.code(error.status).header('WWW-Authenticate', value).send();
    }
  }

  app.get(new URL(resourceMetadataUrl).pathname, () =>
    protectedResourceMetadata({ issuer, resource, scopesSupported: ['files:read', 'files:write'] }),
  );
  // Stateless Streamable HTTP: no stream to resume (GET) nor session to end (DELETE)...
  app.route({
    method: ['GET', 'DELETE'],
    url: new URL(resource).pathname,
    handler: (_request, reply) => reply.code(405).header('Allow', 'POST').send(),
  });
  // ...and a server and a transport per request, each request authorized.
  app.post(new URL(resource).pathname, async (request, reply) => {
    const auth = await authorize(request, reply);
    if (auth === undefined) {
      return reply;
    }
    const server = filesServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    reply.hijack();
    reply.raw.on('close', () => void transport.close().then(() => server.close()));
    await server.connect(transport);
    const incoming: IncomingMessage & { auth?: AuthInfo } = request.raw;
    incoming.auth = auth;
    await transport.handleRequest(incoming, reply.raw, request.body);
  });
  return app;
}
