import type { FederationProviderConfig } from '../../config/settings/federation-settings.js';
import { s256 } from './flow-secrets.js';
import {
  ProviderRefusal,
  providerEmail,
  type FlowSecrets,
  type IdentityProvider,
  type ProviderProfile,
} from './identity-provider.js';

/** The largest answer read from GitHub's endpoints; theirs are a few kilobytes. */
const MAX_ANSWER_BYTES = 256 * 1024;

/**
 * GitHub (or GitHub Enterprise, or anything speaking its dialect): plain OAuth 2.0 with PKCE and
 * state, then the profile API. The identity is (the authorization server's origin, `/user`'s
 * numeric `id`); the address is `/user/emails`' primary entry, verified only if GitHub marks it
 * so. The access token is used for those two reads and dropped.
 */
export class GithubIdentityProvider implements IdentityProvider {
  private readonly authorizationEndpoint: string;
  private readonly tokenEndpoint: string;
  private readonly apiUrl: string;

  constructor(
    readonly config: FederationProviderConfig,
    private readonly options: { readonly timeoutSeconds: number },
  ) {
    // The settings parser fills these for every github provider.
    this.authorizationEndpoint = config.authorizationUrl ?? '';
    this.tokenEndpoint = config.tokenUrl ?? '';
    this.apiUrl = config.apiUrl ?? '';
  }

  authorizationUrl(secrets: FlowSecrets, redirectUri: string): Promise<URL> {
    const url = new URL(this.authorizationEndpoint);
    url.search = new URLSearchParams({
      client_id: this.config.clientId,
      redirect_uri: redirectUri,
      scope: this.config.scopes,
      state: secrets.state,
      code_challenge: s256(secrets.codeVerifier),
      code_challenge_method: 'S256',
    }).toString();
    return Promise.resolve(url);
  }

  async complete(
    callbackUrl: URL,
    secrets: FlowSecrets,
    redirectUri: string,
  ): Promise<ProviderProfile> {
    const parameters = callbackUrl.searchParams;
    // RFC 9207: GitHub sends no `iss`; one that is sent must be this server's.
    const iss = parameters.get('iss');
    if (iss !== null && iss !== this.config.issuer) {
      throw new ProviderRefusal('provider_error', 'iss of another authorization server');
    }
    if (parameters.get('state') !== secrets.state) {
      throw new ProviderRefusal('provider_error', 'state mismatch');
    }
    const error = parameters.get('error');
    if (error !== null) {
      throw new ProviderRefusal(
        error === 'access_denied' ? 'access_denied' : 'provider_error',
        `authorization response error ${error.slice(0, 64)}`,
      );
    }
    const code = parameters.get('code');
    if (code === null || code === '') {
      throw new ProviderRefusal('provider_error', 'no code in the authorization response');
    }
    const accessToken = await this.redeem(code, secrets, redirectUri);
    const user = await this.read('/user', accessToken);
    const emails = await this.read('/user/emails', accessToken);
    const id = isRecord(user) ? user.id : undefined;
    if (typeof id !== 'number' && typeof id !== 'string') {
      throw new ProviderRefusal('provider_error', '/user has no id');
    }
    const primary: unknown = Array.isArray(emails)
      ? (emails as unknown[]).find((entry) => isRecord(entry) && entry.primary === true)
      : undefined;
    const email = isRecord(primary) ? providerEmail(primary.email) : null;
    return {
      issuer: this.config.issuer,
      subject: String(id),
      email,
      emailVerified: email !== null && isRecord(primary) && primary.verified === true,
      displayName: isRecord(user) && typeof user.login === 'string' ? user.login : null,
    };
  }

  private async redeem(code: string, secrets: FlowSecrets, redirectUri: string): Promise<string> {
    const answer = await this.call(this.tokenEndpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: this.config.clientId,
        client_secret: this.config.clientSecret,
        code,
        redirect_uri: redirectUri,
        code_verifier: secrets.codeVerifier,
      }).toString(),
    });
    // GitHub answers errors of this endpoint with 200 and an `error` field.
    if (
      !isRecord(answer) ||
      typeof answer.access_token !== 'string' ||
      answer.access_token === ''
    ) {
      const reason = isRecord(answer) && typeof answer.error === 'string' ? answer.error : 'none';
      throw new ProviderRefusal('provider_error', `no access token (error ${reason.slice(0, 64)})`);
    }
    return answer.access_token;
  }

  private read(path: string, accessToken: string): Promise<unknown> {
    return this.call(`${this.apiUrl}${path}`, {
      method: 'GET',
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/vnd.github+json' },
    });
  }

  /** One JSON exchange, within the timeout, following no redirect. */
  private async call(
    url: string,
    init: { method: string; headers: Record<string, string>; body?: string },
  ): Promise<unknown> {
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, {
        ...init,
        headers: { accept: 'application/json', 'user-agent': 'Keygate', ...init.headers },
        redirect: 'error',
        signal: AbortSignal.timeout(this.options.timeoutSeconds * 1000),
      });
      text = await response.text();
    } catch (error: unknown) {
      const name = error instanceof Error ? error.name : 'Error';
      throw new ProviderRefusal('provider_unavailable', `${name} from ${new URL(url).pathname}`);
    }
    if (!response.ok) {
      throw new ProviderRefusal(
        'provider_error',
        `${new URL(url).pathname} answered ${response.status}`,
      );
    }
    if (text.length > MAX_ANSWER_BYTES) {
      throw new ProviderRefusal('provider_error', `${new URL(url).pathname} answered too much`);
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new ProviderRefusal('provider_error', `${new URL(url).pathname} answered no JSON`);
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
