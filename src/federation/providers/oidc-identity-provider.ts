import * as client from 'openid-client';
import type { FederationProviderConfig } from '../../config/settings/federation-settings.js';
import {
  ProviderRefusal,
  providerEmail,
  type FlowSecrets,
  type IdentityProvider,
  type ProviderProfile,
} from './identity-provider.js';

/**
 * An OpenID Connect provider, through `openid-client` (a certified relying party): discovery of
 * the issuer (read once, on first use, and again after a failure), the code flow with PKCE,
 * state and nonce, RFC 9207's `iss` check, and the ID token's signature (non-repudiation checks
 * on: openid-client 6 checks a code-flow ID token's signature only then), issuer, audience,
 * expiry, nonce and algorithm (one the provider publishes, never `none`).
 */
export class OidcIdentityProvider implements IdentityProvider {
  private discovered: Promise<client.Configuration> | null = null;

  constructor(
    readonly config: FederationProviderConfig,
    private readonly options: { readonly allowInsecure: boolean; readonly timeoutSeconds: number },
  ) {}

  async authorizationUrl(secrets: FlowSecrets, redirectUri: string): Promise<URL> {
    const configuration = await this.configuration();
    return client.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: this.config.scopes,
      state: secrets.state,
      nonce: secrets.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(secrets.codeVerifier),
      code_challenge_method: 'S256',
    });
  }

  /** The redirect URI sent to the token endpoint is the callback's URL without its query. */
  async complete(callbackUrl: URL, secrets: FlowSecrets): Promise<ProviderProfile> {
    const configuration = await this.configuration();
    let claims: client.IDToken;
    let userInfo: client.UserInfoResponse | null = null;
    try {
      const tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: secrets.codeVerifier,
        expectedState: secrets.state,
        expectedNonce: secrets.nonce,
        idTokenExpected: true,
      });
      const idClaims = tokens.claims();
      if (idClaims === undefined) {
        throw new ProviderRefusal('provider_error', 'no ID token');
      }
      claims = idClaims;
      // Many providers put the address only in the userinfo answer; it must name the same subject.
      if (claims.email === undefined && configuration.serverMetadata().userinfo_endpoint) {
        userInfo = await client.fetchUserInfo(configuration, tokens.access_token, claims.sub);
      }
    } catch (error: unknown) {
      throw refusalOf(error);
    }
    const source: Record<string, unknown> = userInfo ?? claims;
    return {
      issuer: claims.iss,
      subject: claims.sub,
      email: providerEmail(source.email),
      // Exactly `true`: a provider that says nothing, `false`, or "true" never vouches.
      emailVerified: source.email_verified === true,
      displayName: firstString(source.preferred_username, source.name, claims.preferred_username),
    };
  }

  private configuration(): Promise<client.Configuration> {
    this.discovered ??= this.discover().catch((error: unknown) => {
      this.discovered = null;
      throw refusalOf(error);
    });
    return this.discovered;
  }

  private async discover(): Promise<client.Configuration> {
    const execute = [client.enableNonRepudiationChecks];
    if (this.options.allowInsecure) {
      execute.push(client.allowInsecureRequests);
    }
    const configuration = await client.discovery(
      new URL(this.config.issuer),
      this.config.clientId,
      { client_secret: this.config.clientSecret },
      client.ClientSecretPost(this.config.clientSecret),
      { execute, timeout: this.options.timeoutSeconds },
    );
    configuration.timeout = this.options.timeoutSeconds;
    return configuration;
  }
}

/** The machine code of a failure; the detail names the check, never a token. */
function refusalOf(error: unknown): ProviderRefusal {
  if (error instanceof ProviderRefusal) {
    return error;
  }
  if (error instanceof client.AuthorizationResponseError) {
    return new ProviderRefusal(
      error.error === 'access_denied' ? 'access_denied' : 'provider_error',
      `authorization response error ${error.error}`,
    );
  }
  const name = error instanceof Error ? error.name : 'Error';
  const code =
    typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
  const message = error instanceof Error ? error.message : String(error);
  return new ProviderRefusal(
    unreachable(error) ? 'provider_unavailable' : 'provider_error',
    `${name}${code === '' ? '' : ` ${code}`}: ${message}`,
  );
}

/**
 * A provider that did not answer: a timeout, or a connection that failed. openid-client wraps
 * some of these (a refused connection at the token endpoint arrives as a ClientError whose
 * `cause` is fetch's TypeError), so the causes are looked through too.
 */
function unreachable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 4) {
    return false;
  }
  const { name, code, message, cause } = error as Record<string, unknown>;
  if (
    name === 'AbortError' ||
    name === 'TimeoutError' ||
    code === 'OAUTH_TIMEOUT' ||
    (name === 'TypeError' && message === 'fetch failed')
  ) {
    return true;
  }
  return unreachable(cause, depth + 1);
}

function firstString(...values: unknown[]): string | null {
  for (const value of values) {
    if (typeof value === 'string' && value.trim() !== '') {
      return value.trim();
    }
  }
  return null;
}
