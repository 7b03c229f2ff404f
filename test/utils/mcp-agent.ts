import {
  UnauthorizedError,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { decodeJwt } from 'jose';
import { TestBrowser, type BrowserAnswer } from './oauth-provider.js';

/** The person at the agent's side: who signs in on Keygate's hosted pages. */
export interface AgentPerson {
  readonly email: string;
  readonly password: string;
}

export interface McpAgentSettings {
  /** The agent's loopback callback (RFC 8252 §7.3); nothing needs to listen there. */
  readonly redirectUrl: string;
  readonly person: AgentPerson;
  /** An operator-registered client's id; without it the agent registers or presents its document. */
  readonly clientId?: string;
  /** The `https` URL of the agent's client ID metadata document, when it has one. */
  readonly clientMetadataUrl?: string;
}

/**
 * An MCP client's OAuthClientProvider, for the SDK's own `auth()`: it keeps what the SDK hands
 * it in memory, and "redirects" by driving Keygate's hosted sign-in and consent pages over HTTP
 * as the person's browser would, keeping the authorization code the callback carries.
 *
 * Two things a client of SDK 1.32.2 has to do itself, both as later SDK versions do:
 * - SEP-2207: the SDK asks only for the scopes the MCP server names, so an agent that wants to
 *   refresh adds `offline_access` (with `prompt=consent`) when the authorization server lists it.
 * - Step-up with a refresh token held (typescript-sdk#2255): the SDK would refresh, which cannot
 *   widen a grant (RFC 6749 §6), get the same 403 and give up. When a 403 `insufficient_scope`
 *   names a scope the held token lacks, the refresh token is kept from `auth()` until new tokens
 *   arrive, so the SDK sends the person to consent instead (SEP-2350's refresh bypass).
 */
export class McpAgent implements OAuthClientProvider {
  readonly browser = new TestBrowser();
  /** Every authorization request the SDK built, as the browser opened it. */
  readonly authorizationRequests: URL[] = [];
  /** Every consent page the person approved. */
  readonly consentPages: string[] = [];
  /** Every token request the SDK made (form bodies). */
  readonly tokenRequests: URLSearchParams[] = [];
  /** Every token response the SDK saved. */
  readonly issuedTokens: OAuthTokens[] = [];
  readonly clientMetadataUrl: string | undefined;

  private client: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier: string | undefined;
  private discovery: OAuthDiscoveryState | undefined;
  private code: string | undefined;
  private isSteppingUp = false;

  constructor(private readonly settings: McpAgentSettings) {
    this.clientMetadataUrl = settings.clientMetadataUrl;
    this.client = settings.clientId === undefined ? undefined : { client_id: settings.clientId };
  }

  get redirectUrl(): string {
    return this.settings.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    // What the SDK registers (RFC 7591): no application_type, as deployed MCP clients send it.
    return {
      client_name: 'Agente de pruebas',
      redirect_uris: [this.settings.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.client;
  }

  saveClientInformation(information: OAuthClientInformationMixed): void {
    this.client = information;
  }

  tokens(): OAuthTokens | undefined {
    if (this.saved === undefined || !this.isSteppingUp) {
      return this.saved;
    }
    const { refresh_token: _held, ...withoutRefresh } = this.saved;
    return withoutRefresh;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
    this.issuedTokens.push(tokens);
    this.isSteppingUp = false;
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.verifier === undefined) {
      throw new Error('no code verifier saved');
    }
    return this.verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }

  /** The held access token, as the MCP server receives it. */
  get accessToken(): string {
    if (this.saved === undefined) {
      throw new Error('the agent holds no token');
    }
    return this.saved.access_token;
  }

  /** The code of the last authorization, once: what the callback gave the agent. */
  takeCode(): string {
    const code = this.code;
    if (code === undefined) {
      throw new Error('no authorization code: the person was not sent through the pages');
    }
    this.code = undefined;
    return code;
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    const request = new URL(authorizationUrl);
    const scopes = (request.searchParams.get('scope') ?? '').split(' ').filter(Boolean);
    const offered = this.discovery?.authorizationServerMetadata?.scopes_supported ?? [];
    if (offered.includes('offline_access') && !scopes.includes('offline_access')) {
      request.searchParams.set('scope', [...scopes, 'offline_access'].join(' '));
      request.searchParams.set('prompt', 'consent');
    }
    this.authorizationRequests.push(request);
    const redirect = this.settings.redirectUrl;
    let page = await this.browser.follow(request, redirect);
    if (!page.url.href.startsWith(redirect) && page.text.includes('name="password"')) {
      page = await this.browser.submit(
        expectPage(page),
        { email: this.settings.person.email, password: this.settings.person.password },
        redirect,
      );
    }
    if (!page.url.href.startsWith(redirect)) {
      this.consentPages.push(expectPage(page).text);
      page = await this.browser.submit(page, { decision: 'approve' }, redirect);
    }
    const code = page.url.searchParams.get('code');
    if (code === null) {
      throw new Error(
        `the authorization ended without a code: ${page.status} ${page.url.href}\n${page.text}`,
      );
    }
    this.code = code;
  }

  /**
   * The fetch to give the SDK's transport and `auth()`: it records token requests and notices a
   * 403 `insufficient_scope` asking for a scope the held token lacks (see the class comment).
   */
  readonly fetch: FetchLike = async (url, init) => {
    const target = new URL(url);
    if (init?.method === 'POST' && target.pathname === '/oauth/token') {
      const body = init.body;
      this.tokenRequests.push(
        new URLSearchParams(
          body instanceof URLSearchParams ? body : typeof body === 'string' ? body : '',
        ),
      );
    }
    const response = await fetch(url, init);
    const challenge = response.headers.get('www-authenticate') ?? '';
    if (response.status === 403 && challenge.includes('error="insufficient_scope"')) {
      const asked = /scope="([^"]*)"/.exec(challenge)?.[1]?.split(' ') ?? [];
      const held = this.saved === undefined ? [] : scopesOf(this.saved.access_token);
      this.isSteppingUp = asked.some((scope) => !held.includes(scope));
    }
    return response;
  };
}

/** The `scope` claim of a JWT access token, as a list. */
export function scopesOf(accessToken: string): string[] {
  const { scope } = decodeJwt(accessToken);
  return typeof scope === 'string' ? scope.split(' ') : [];
}

/** A page of the hosted flow, not an error page. */
function expectPage(page: BrowserAnswer): BrowserAnswer {
  if (page.status !== 200) {
    throw new Error(`the hosted page answered ${page.status}: ${page.text}`);
  }
  return page;
}

/** An MCP client of the SDK, connected through `agent` to the MCP server at `serverUrl`. */
export interface ConnectedAgent {
  readonly client: Client;
  readonly transport: StreamableHTTPClientTransport;
}

/** A new client and transport for `serverUrl`, authorized by `agent`, not yet connected. */
export function agentTransport(agent: McpAgent, serverUrl: string): ConnectedAgent {
  return {
    client: new Client({ name: 'keygate-test-agent', version: '1.0.0' }),
    transport: new StreamableHTTPClientTransport(new URL(serverUrl), {
      authProvider: agent,
      fetch: agent.fetch,
    }),
  };
}

/**
 * Connects as an MCP application does with nothing but the server's URL: the first attempt ends
 * in the SDK's UnauthorizedError once the agent has been through the pages; the code is then
 * exchanged (`finishAuth`) and a new transport connects with the token.
 */
export async function connectAgent(agent: McpAgent, serverUrl: string): Promise<ConnectedAgent> {
  const first = agentTransport(agent, serverUrl);
  try {
    await first.client.connect(first.transport);
    return first;
  } catch (error: unknown) {
    if (!(error instanceof UnauthorizedError)) {
      throw error;
    }
  }
  await first.transport.finishAuth(agent.takeCode());
  const second = agentTransport(agent, serverUrl);
  await second.client.connect(second.transport);
  return second;
}
